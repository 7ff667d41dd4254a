/* The collectives over a buffered protocol (LL, LL128, SIMPLE), written once: in each step every
 * member sends its chunk of the step to every other member's buffer (the root alone for a
 * broadcast), then combines what it received with its own chunk:
 * - broadcast: the root's chunk;
 * - fcollect, alltoall: every member's chunk into that member's block of dest (alltoall sends
 *   each member the block meant for it);
 * - reduce, reducescatter: op over every member's chunk in member order, the same on every PE
 *   (reducescatter sends each member the block it reduces).
 * The protocol decides the units of a step, their order and the flow control. */
#ifndef GSHMEM_DEVICE_COLL_ALGO_EXCHANGE_CUH
#define GSHMEM_DEVICE_COLL_ALGO_EXCHANGE_CUH

#include "ops.cuh"

/* OP is GSHMEMI_OP_NONE for the collectives that only move data: a reduction instantiation
 * carries only the reduction path, a data-moving one only the others. DYN (the routed path of a
 * team with remote members, device/coll.cuh): one instantiation per element type for every
 * collective, the operator read from `op` at run time (GSHMEMI_OP_NONE: data moves); OP is then
 * GSHMEMI_OP_NONE. */
template <int OP, typename T, bool DYN = false> struct gshmemi_exchange {
    /* read where used, not held: the grid form keeps the team in shared memory, and registers
     * held across the steps would push it past its bound (grid_registers) */
    const gshmemi_team_dev_t &t;
    const gshmemi_coll_args_t &a;
    int op = GSHMEMI_OP_NONE; /* DYN only */

    GSHMEMI_DEVM bool reduces() const { return DYN ? op != GSHMEMI_OP_NONE : OP != GSHMEMI_OP_NONE; }
    GSHMEMI_DEVM size_t blk() const { return a.nelems * a.es; } /* bytes of one block */
    /* a reduction into its own source: the protocol must not let the result overwrite a chunk
     * still being sent */
    GSHMEMI_DEVM bool in_place() const { return reduces() && a.kind == GSHMEMI_COLL_REDUCE && a.dest == a.src; }
    GSHMEMI_DEVM bool bcast() const { return !reduces() && a.kind == GSHMEMI_COLL_BROADCAST; } /* only the root sends */
    /* alltoall, reducescatter: block `to` of the source goes to member `to` */
    GSHMEMI_DEVM bool per_dest() const
    {
        return reduces() ? a.kind == GSHMEMI_COLL_REDUCESCATTER : a.kind == GSHMEMI_COLL_ALLTOALL;
    }
    template <typename P> GSHMEMI_DEVM void send(const P &p) const
    {
        const char *src = (const char *)a.src;
        if (!bcast() || t.my_idx == a.root) p.send([&](int to) { return src + (per_dest() ? (size_t)to * blk() : 0) + p.off; });
    }
    template <typename P> GSHMEMI_DEVM void recv(const P &p) const
    {
        p.recv(bcast() ? a.root : -1, [&](const typename P::unit &u) {
            /* worked out per unit, after the protocol's waits: held across them, they cost the
             * grid form registers */
            const int n = t.size, me = t.my_idx;
            const char *own = (const char *)a.src + (per_dest() ? (size_t)me * blk() : 0) + p.off;
            char *dst = (char *)a.dest + p.off;
            auto get = [&](int i) { return i == me ? p.own(u, own) : p.from(u, i); };
            auto move = [&]() {
                if (bcast()) p.out(u, dst, get(a.root));
                else
                    for (int i = 0; i < n; i++) p.out(u, dst + (size_t)i * blk(), get(i));
            };
            if constexpr (DYN) {
                if (reduces()) p.template reduce_dyn<T>(u, op, n, get, dst);
                else move();
            } else if constexpr (OP != GSHMEMI_OP_NONE) p.template reduce<OP, T>(u, n, get, dst);
            else move();
        });
    }
    template <typename P> GSHMEMI_DEVM void step(const P &p) const
    {
        send(p);
        recv(p);
    }
};

#endif
