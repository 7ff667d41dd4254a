#include "join.h"

/* idx[] = 0..n-1 ordered by (PE, destination offset), ties by ticket: an insertion sort (n is
 * at most GSHMEMI_PROXY_JOIN_MAX). */
static void sort_puts(const gshmemi_proxy_req_t *b, int *idx, int n)
{
    for (int i = 0; i < n; i++) idx[i] = i;
    for (int i = 1; i < n; i++) {
        const int v = idx[i], vpe = gshmemi_proxy_req_pe(&b[v]);
        int j = i - 1;
        while (j >= 0) {
            const int upe = gshmemi_proxy_req_pe(&b[idx[j]]);
            if (upe < vpe || (upe == vpe && b[idx[j]].arg[1] <= b[v].arg[1])) break;
            idx[j + 1] = idx[j];
            j--;
        }
        idx[j + 1] = v;
    }
}

int gshmemi_proxy_join_puts(const gshmemi_proxy_req_t *b, int n, uint64_t t0, gshmemi_proxy_put_run_t *run)
{
    int idx[GSHMEMI_PROXY_JOIN_MAX], nrun = 0;

    if (n <= 0 || n > GSHMEMI_PROXY_JOIN_MAX) return 0;
    sort_puts(b, idx, n);
    for (int i = 0; i < n; i++) {
        const gshmemi_proxy_req_t *r = &b[idx[i]];
        const int pe = gshmemi_proxy_req_pe(r);
        const uint64_t ticket = t0 + (uint64_t)idx[i];
        int k;
        /* the latest run of this PE that this put continues at both ends */
        for (k = nrun - 1; k >= 0 && run[k].pe == pe; k--)
            if (run[k].dst + run[k].n == r->arg[1] && run[k].src + run[k].n == r->arg[2]) break;
        if (k >= 0 && run[k].pe == pe) {
            run[k].n += r->arg[3];
            run[k].count++;
            if (ticket < run[k].first) run[k].first = ticket;
            continue;
        }
        run[nrun].pe = pe;
        run[nrun].dst = r->arg[1];
        run[nrun].src = r->arg[2];
        run[nrun].n = r->arg[3];
        run[nrun].first = ticket;
        run[nrun].count = 1;
        nrun++;
    }
    return nrun;
}
