/*
 * pickle_arena.c: the value arena of a pickle document (see pickle_arena.h)
 * and the document over its input: a buffer, or a file mapped read-only.
 *
 * The node and cell arrays live in anonymous mappings grown with mremap (the
 * kernel moves page tables, nothing is copied) and advised for transparent
 * huge pages, so filling them costs few page faults.
 */
#include "import/pickle_arena.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

bool strata_pickle_is_container(strata_pickle_type t)
{
    return t == STRATA_PICKLE_LIST || t == STRATA_PICKLE_TUPLE || t == STRATA_PICKLE_DICT ||
           t == STRATA_PICKLE_SET;
}

void *strata_pickle_region_resize(void *old, size_t old_bytes, size_t new_bytes)
{
    void *m = old == NULL ? mmap(NULL, new_bytes, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                          : mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE);
    if (m == MAP_FAILED)
        g_error("strata: out of memory mapping %zu bytes for a pickle", new_bytes);
#ifdef MADV_HUGEPAGE
    madvise(m, new_bytes, MADV_HUGEPAGE);
#endif
    return m;
}

void strata_pickle_region_grow(void **array, size_t *cap, size_t elem)
{
    *array = strata_pickle_region_resize(*array, *cap * elem, *cap * 2 * elem);
    *cap *= 2;
}

void strata_pickle_arena_init(strata_pickle *p)
{
    p->space.n_nodes = 1; /* node 0: the null handle (mappings start zeroed) */
    p->space.cap_nodes = 4096;
    p->space.nodes = strata_pickle_region_resize(NULL, 0, p->space.cap_nodes * sizeof(pnode));
    p->space.n_cells = 1;
    p->space.cap_cells = 4096;
    p->space.cells = strata_pickle_region_resize(NULL, 0, p->space.cap_cells * sizeof(pcell));
    p->space.strbuf = g_byte_array_new();
}

strata_pickle *strata_pickle_doc_for_buffer(const void *data, size_t len, const char *origin)
{
    strata_pickle *p = g_new0(strata_pickle, 1);
    p->origin = g_strdup(origin ? origin : "<pickle>");
    p->data = data;
    p->len = len;
    return p;
}

strata_pickle *strata_pickle_doc_for_file(const char *path, GError **err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot open: %s", path,
                    g_strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    static const uint8_t empty[1] = {0};
    strata_pickle *p = strata_pickle_doc_for_buffer(empty, 0, path);
    p->len = (size_t)st.st_size;
    if (p->len > 0) {
        void *m = mmap(NULL, p->len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "%s: cannot map: %s", path,
                        g_strerror(errno));
            close(fd);
            g_free(p->origin);
            g_free(p);
            return NULL;
        }
        madvise(m, p->len, MADV_SEQUENTIAL);
        p->map = m;
        p->map_len = p->len;
        p->data = m;
    }
    close(fd);
    return p;
}

void strata_pickle_free(strata_pickle *p)
{
    if (p == NULL)
        return;
    if (p->map)
        munmap(p->map, p->map_len);
    if (p->space.nodes)
        munmap(p->space.nodes, p->space.cap_nodes * sizeof(pnode));
    if (p->space.cells)
        munmap(p->space.cells, p->space.cap_cells * sizeof(pcell));
    if (p->space.strbuf)
        g_byte_array_unref(p->space.strbuf);
    g_free(p->origin);
    g_free(p);
}
