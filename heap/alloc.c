/* Best-fit offset allocator for the symmetric heap (see alloc.h for the policy).
 *
 * The region is tiled by blocks, each free or live, chained in address order so a block's
 * neighbours are found in O(1) for coalescing. Each block also sits in exactly one AVL tree:
 * free blocks in one ordered by (size, offset) for best fit, live blocks in one ordered by offset
 * to validate frees. Trees are keyed by offsets and sizes only, never by pointers, so the result
 * depends on nothing but the call sequence. */
#include "alloc.h"

#include <stdint.h>
#include <stdlib.h>

#include "../runtime/base/log.h"

typedef struct blk {
    size_t off, size;
    struct blk *prev, *next;  /* address order; next also links the spare-node pool */
    struct blk *left, *right; /* in the tree the block's state puts it in */
    int height;
    int is_free;
} blk_t;

struct gshmemi_alloc {
    size_t region, min_align;
    blk_t *head;       /* block at offset 0 */
    blk_t *free_tree;  /* free blocks by (size, off) */
    blk_t *live_tree;  /* live blocks by off */
    blk_t *spare;      /* recycled nodes, so a split never fails half way */
    size_t bytes_free, high_water;
};

/* ---- AVL tree, shared by both orders ---- */

enum { BY_OFF = 0, BY_SIZE = 1 };

static int key_cmp(int order, const blk_t *x, const blk_t *y)
{
    if (order == BY_SIZE && x->size != y->size) return x->size < y->size ? -1 : 1;
    if (x->off != y->off) return x->off < y->off ? -1 : 1;
    return 0;
}

static int height(const blk_t *n) { return n ? n->height : 0; }

static void update(blk_t *n)
{
    int hl = height(n->left), hr = height(n->right);
    n->height = 1 + (hl > hr ? hl : hr);
}

/* n's child on one side (left when to_right) takes n's place, n becoming its child on the other
 * side; returns the new subtree root. */
static blk_t *rotate(blk_t *n, int to_right)
{
    blk_t **child = to_right ? &n->left : &n->right, *c = *child;
    blk_t **inner = to_right ? &c->right : &c->left;
    *child = *inner;
    *inner = n;
    update(n);
    update(c);
    return c;
}
static blk_t *rotate_right(blk_t *n) { return rotate(n, 1); }
static blk_t *rotate_left(blk_t *n) { return rotate(n, 0); }

/* Restores the AVL property at n, whose subtrees are balanced and differ in height by <= 2. */
static blk_t *rebalance(blk_t *n)
{
    int bf = height(n->left) - height(n->right);
    if (bf > 1) {
        if (height(n->left->left) < height(n->left->right)) n->left = rotate_left(n->left);
        return rotate_right(n);
    }
    if (bf < -1) {
        if (height(n->right->right) < height(n->right->left)) n->right = rotate_right(n->right);
        return rotate_left(n);
    }
    update(n);
    return n;
}

static blk_t *tree_insert(blk_t *root, blk_t *n, int order)
{
    if (!root) {
        n->left = n->right = NULL;
        n->height = 1;
        return n;
    }
    if (key_cmp(order, n, root) < 0)
        root->left = tree_insert(root->left, n, order);
    else
        root->right = tree_insert(root->right, n, order);
    return rebalance(root);
}

static blk_t *tree_remove_min(blk_t *root, blk_t **min)
{
    if (!root->left) {
        *min = root;
        return root->right;
    }
    root->left = tree_remove_min(root->left, min);
    return rebalance(root);
}

/* Removes n, which must be in the tree (keys are unique in both orders). */
static blk_t *tree_remove(blk_t *root, blk_t *n, int order)
{
    int c;
    if (!root) return NULL;
    c = key_cmp(order, n, root);
    if (c < 0) {
        root->left = tree_remove(root->left, n, order);
    } else if (c > 0) {
        root->right = tree_remove(root->right, n, order);
    } else {
        blk_t *l = root->left, *r = root->right, *succ;
        if (!r) return l;
        /* The successor takes the removed node's place; nodes move, keys are never copied. */
        r = tree_remove_min(r, &succ);
        succ->left = l;
        succ->right = r;
        return rebalance(succ);
    }
    return rebalance(root);
}

/* Smallest free block with (size, off) >= (size, off), or NULL. */
static blk_t *free_ceil(const gshmemi_alloc_t *a, size_t size, size_t off)
{
    blk_t *n = a->free_tree, *best = NULL;
    while (n) {
        if (n->size > size || (n->size == size && n->off >= off)) {
            best = n;
            n = n->left;
        } else {
            n = n->right;
        }
    }
    return best;
}

static blk_t *live_find(const gshmemi_alloc_t *a, size_t off)
{
    blk_t *n = a->live_tree;
    while (n && n->off != off) n = off < n->off ? n->left : n->right;
    return n;
}

/* ---- nodes and the address chain ---- */

static int reserve_nodes(gshmemi_alloc_t *a, int count)
{
    int have = 0;
    for (blk_t *n = a->spare; n && have < count; n = n->next) have++;
    for (; have < count; have++) {
        blk_t *n = calloc(1, sizeof(*n));
        if (!n) return GSHMEMI_ERR_NOMEM;
        n->next = a->spare;
        a->spare = n;
    }
    return GSHMEMI_OK;
}

static blk_t *take_node(gshmemi_alloc_t *a)
{
    blk_t *n = a->spare;
    a->spare = n->next;
    n->prev = n->next = n->left = n->right = NULL;
    return n;
}

static void put_node(gshmemi_alloc_t *a, blk_t *n)
{
    n->next = a->spare;
    a->spare = n;
}

static void chain_insert_after(blk_t *pos, blk_t *n)
{
    n->prev = pos;
    n->next = pos->next;
    if (pos->next) pos->next->prev = n;
    pos->next = n;
}

static void chain_unlink(gshmemi_alloc_t *a, blk_t *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        a->head = n->next;
    if (n->next) n->next->prev = n->prev;
}

/* Bytes to skip from the start of b to reach align; b fits when the rest holds size. */
static int fits(const blk_t *b, size_t size, size_t align, size_t *pad)
{
    size_t p = (align - (b->off & (align - 1))) & (align - 1);
    if (p > b->size || b->size - p < size) return 0;
    *pad = p;
    return 1;
}

/* Best fit in (size, offset) order. A block of at least size + align - min_align fits wherever
 * it starts (offsets are multiples of min_align), so only smaller ones can fail the alignment. */
static blk_t *find_fit(const gshmemi_alloc_t *a, size_t size, size_t align, size_t *pad)
{
    size_t slack = align - a->min_align;
    size_t sure = size > SIZE_MAX - slack ? SIZE_MAX : size + slack;
    blk_t *n = free_ceil(a, size, 0);
    int scanned = 0;

    for (; n && n->size < sure && scanned < GSHMEMI_ALLOC_SCAN_LIMIT; scanned++) {
        if (fits(n, size, align, pad)) return n;
        n = free_ceil(a, n->size, n->off + 1);
    }
    if (n && n->size < sure) {
        /* Too many misfits: take the smallest block that surely fits, if there is one. */
        blk_t *s = free_ceil(a, sure, 0);
        if (s && fits(s, size, align, pad)) return s;
        /* Otherwise the remaining candidates are all we have; keep scanning them. */
        for (; n && n->size < sure; n = free_ceil(a, n->size, n->off + 1))
            if (fits(n, size, align, pad)) return n;
        return NULL;
    }
    /* n is NULL, or the smallest block of at least sure (which fits unless sure saturated). */
    return n && fits(n, size, align, pad) ? n : NULL;
}

/* ---- API ---- */

int gshmemi_alloc_create(size_t region, size_t min_align, gshmemi_alloc_t **out)
{
    gshmemi_alloc_t *a;
    blk_t *b;

    if (!out) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_create: out is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    *out = NULL;
    if (min_align == 0 || (min_align & (min_align - 1))) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_create: min_align %zu is not a power of two", min_align);
        return GSHMEMI_ERR_INVALID;
    }
    if (region == 0 || (region & (min_align - 1))) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_create: region %zu is not a non-zero multiple of min_align %zu", region,
                      min_align);
        return GSHMEMI_ERR_INVALID;
    }
    a = calloc(1, sizeof(*a));
    b = calloc(1, sizeof(*b));
    if (!a || !b) {
        free(a);
        free(b);
        GSHMEMI_ERROR("heap", "gshmemi_alloc_create: out of host memory");
        return GSHMEMI_ERR_NOMEM;
    }
    a->region = region;
    a->min_align = min_align;
    a->bytes_free = region;
    b->off = 0;
    b->size = region;
    b->is_free = 1;
    a->head = b;
    a->free_tree = tree_insert(NULL, b, BY_SIZE);
    *out = a;
    return GSHMEMI_OK;
}

int gshmemi_alloc_alloc(gshmemi_alloc_t *a, size_t size, size_t align, size_t *off)
{
    blk_t *b, *t;
    size_t pad = 0, start, rest;

    if (!a || !off) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_alloc: %s is NULL", !a ? "allocator" : "off");
        return GSHMEMI_ERR_INVALID;
    }
    if (size == 0) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_alloc: size is 0");
        return GSHMEMI_ERR_INVALID;
    }
    if (align == 0) align = a->min_align;
    if (align & (align - 1)) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_alloc: align %zu is not a power of two", align);
        return GSHMEMI_ERR_INVALID;
    }
    if (align < a->min_align) align = a->min_align;
    /* Checked before rounding so sizes near SIZE_MAX cannot wrap: size <= bytes_free <= region,
     * a multiple of min_align, so rounding up stays <= region. */
    if (size > a->bytes_free) return GSHMEMI_ERR_NOMEM;
    size = (size + a->min_align - 1) & ~(a->min_align - 1);
    /* A split needs up to two new nodes: get them first so failure leaves the heap as it was. */
    if (reserve_nodes(a, 2) != GSHMEMI_OK) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_alloc: out of host memory for allocator metadata");
        return GSHMEMI_ERR_NOMEM;
    }
    b = find_fit(a, size, align, &pad);
    if (!b) return GSHMEMI_ERR_NOMEM;

    a->free_tree = tree_remove(a->free_tree, b, BY_SIZE);
    start = b->off + pad;
    rest = b->size - pad - size;
    if (pad) {
        /* b stays free as the leading fragment; the allocation gets a node of its own. */
        t = take_node(a);
        b->size = pad;
        a->free_tree = tree_insert(a->free_tree, b, BY_SIZE);
        t->off = start;
        chain_insert_after(b, t);
        b = t;
    }
    b->size = size;
    b->is_free = 0;
    a->live_tree = tree_insert(a->live_tree, b, BY_OFF);
    if (rest) {
        t = take_node(a);
        t->off = start + size;
        t->size = rest;
        t->is_free = 1;
        chain_insert_after(b, t);
        a->free_tree = tree_insert(a->free_tree, t, BY_SIZE);
    }
    a->bytes_free -= size;
    if (start + size > a->high_water) a->high_water = start + size;
    *off = start;
    return GSHMEMI_OK;
}

/* The adjacent blocks lower and upper become one, lower; free_neighbour (one of the two, free)
 * leaves the free tree, and upper's node is recycled. */
static void join(gshmemi_alloc_t *a, blk_t *lower, blk_t *upper, blk_t *free_neighbour)
{
    a->free_tree = tree_remove(a->free_tree, free_neighbour, BY_SIZE);
    lower->size += upper->size;
    chain_unlink(a, upper);
    put_node(a, upper);
}

int gshmemi_alloc_free(gshmemi_alloc_t *a, size_t off)
{
    blk_t *b, *n;

    if (!a) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_free: allocator is NULL");
        return GSHMEMI_ERR_INVALID;
    }
    if (off >= a->region) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_free: offset %zu is outside the heap region of %zu bytes", off, a->region);
        return GSHMEMI_ERR_INVALID;
    }
    b = live_find(a, off);
    if (!b) {
        GSHMEMI_ERROR("heap", "gshmemi_alloc_free: offset %zu is not the start of a live allocation (never allocated, "
                      "inside a block, or already freed)", off);
        return GSHMEMI_ERR_INVALID;
    }
    a->live_tree = tree_remove(a->live_tree, b, BY_OFF);
    a->bytes_free += b->size;
    b->is_free = 1;
    /* Coalesce at once, so no two free blocks are ever adjacent. */
    n = b->prev;
    if (n && n->is_free) {
        join(a, n, b, n);
        b = n;
    }
    n = b->next;
    if (n && n->is_free) join(a, b, n, n);
    a->free_tree = tree_insert(a->free_tree, b, BY_SIZE);
    return GSHMEMI_OK;
}

size_t gshmemi_alloc_high_water(const gshmemi_alloc_t *a) { return a ? a->high_water : 0; }

size_t gshmemi_alloc_largest_free(const gshmemi_alloc_t *a)
{
    const blk_t *n = a ? a->free_tree : NULL;
    if (!n) return 0;
    while (n->right) n = n->right;
    return n->size;
}

size_t gshmemi_alloc_bytes_free(const gshmemi_alloc_t *a) { return a ? a->bytes_free : 0; }

size_t gshmemi_alloc_size_of(const gshmemi_alloc_t *a, size_t off)
{
    const blk_t *b = a ? live_find(a, off) : NULL;
    return b ? b->size : 0;
}

void gshmemi_alloc_destroy(gshmemi_alloc_t *a)
{
    blk_t *n, *next;
    if (!a) return;
    for (n = a->head; n; n = next) {
        next = n->next;
        free(n);
    }
    for (n = a->spare; n; n = next) {
        next = n->next;
        free(n);
    }
    free(a);
}
