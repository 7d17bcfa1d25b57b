/*
 * pickle_collect.c: the copying collector of a streamed pickle (see
 * pickle_collect.h). A moved node is marked NODE_FORWARDED, its `a` the
 * new handle; immediate ints and the null handle are not nodes.
 */
#include "import/pickle_collect.h"

#include <sys/mman.h>

static strata_pv evacuate(strata_pickle *p, pickle_space *to, strata_pv h)
{
    if (h == STRATA_PV_NULL || PV_IS_INT(h))
        return h;
    pnode *old = &p->space.nodes[h];
    if ((old->type & 0xffu) == NODE_FORWARDED)
        return old->a;
    pnode copy = *old;
    strata_pickle_type t = NODE_TYPE(old);
    if (strata_pickle_is_container(t)) {
        uint32_t cell = (uint32_t)(old->u >> 32), prev = 0, head = 0;
        for (; cell; cell = p->space.cells[cell].next) {
            strata_pickle_region_reserve((void **)&to->cells, to->n_cells, &to->cap_cells,
                                         sizeof(pcell));
            uint32_t k = (uint32_t)to->n_cells++;
            to->cells[k] = (pcell){p->space.cells[cell].key, p->space.cells[cell].value, 0};
            if (prev)
                to->cells[prev].next = k;
            else
                head = k;
            prev = k;
        }
        if (head)
            copy.u = ((uint64_t)head << 32) | prev;
    } else if ((t == STRATA_PICKLE_STR || t == STRATA_PICKLE_BYTES) && (old->u & STR_IN_BUF)) {
        uint64_t off = to->strbuf->len;
        if (old->a > 0) /* an empty buffer may have no storage at all */
            g_byte_array_append(to->strbuf, p->space.strbuf->data + (old->u & ~STR_IN_BUF), old->a);
        copy.u = off | STR_IN_BUF;
    }
    strata_pickle_region_reserve((void **)&to->nodes, to->n_nodes, &to->cap_nodes, sizeof(pnode));
    strata_pv moved = (strata_pv)to->n_nodes++;
    to->nodes[moved] = copy;
    old->type = NODE_FORWARDED;
    old->a = moved;
    return moved;
}

/* The roots: the stack, the memo, the document's root. */
static void evacuate_roots(parser *ps, pickle_space *to)
{
    strata_pickle *p = ps->p;
    for (size_t i = 0; i < ps->n_stack; i++)
        ps->stack[i] = evacuate(p, to, ps->stack[i]);
    if (ps->plan) {
        for (size_t i = 0; i <= ps->plan->mask; i++)
            ps->plan->slots[i].value = evacuate(p, to, ps->plan->slots[i].value);
    } else {
        for (size_t i = 0; i < ps->cap_memo; i++)
            ps->memo[i] = evacuate(p, to, ps->memo[i]);
    }
    p->root = evacuate(p, to, p->root);
}

void strata_pickle_collect(parser *ps, pickle_space *spare)
{
    strata_pickle *p = ps->p;
    pickle_space to = *spare; /* its arrays, or none yet */
    if (!to.nodes) {
        to.cap_nodes = to.cap_cells = 4096;
        to.nodes = strata_pickle_region_resize(NULL, 0, to.cap_nodes * sizeof(pnode));
        to.cells = strata_pickle_region_resize(NULL, 0, to.cap_cells * sizeof(pcell));
    }
    to.n_nodes = to.n_cells = 1;
    to.strbuf = g_byte_array_new();
    evacuate_roots(ps, &to);
    for (size_t scan = 1; scan < to.n_nodes; scan++) {
        if (!strata_pickle_is_container(NODE_TYPE(&to.nodes[scan])))
            continue;
        for (uint32_t cell = (uint32_t)(to.nodes[scan].u >> 32); cell; cell = to.cells[cell].next) {
            strata_pv k = evacuate(p, &to, to.cells[cell].key);
            strata_pv v = evacuate(p, &to, to.cells[cell].value);
            to.cells[cell].key = k;
            to.cells[cell].value = v;
        }
    }
    /* The old arrays become the next collection's to-space; their strings go. */
    g_byte_array_unref(p->space.strbuf);
    *spare = p->space;
    spare->strbuf = NULL;
    p->space = to;
}

void strata_pickle_space_clear(pickle_space *spare)
{
    if (spare->nodes == NULL)
        return;
    munmap(spare->nodes, spare->cap_nodes * sizeof(pnode));
    munmap(spare->cells, spare->cap_cells * sizeof(pcell));
    *spare = (pickle_space){0};
}
