/*
 * xla_hlo.c: the optimized-HLO reader (contract in xla_hlo.h).
 *
 * Design: each instruction line is cut into name, shape, opcode, operand
 * list (to its matching parenthesis) and attributes; FLOPs are computed at
 * once from the shapes known so far, and added to the enclosing
 * computation's sum, which a later fusion reads by its calls= name. An
 * instruction whose FLOPs are past a trace's flops= range is refused at its
 * line.
 */
#include "import/xla_hlo.h"
#include <string.h>
#include "core/error.h"
#include "import/xla_mesh.h"
#include "trace/check.h"

struct xla_hlo {
    GHashTable *instrs;   /* name (borrowed from the instr) -> xla_instr* (owned) */
    GHashTable *comp_flops; /* computation name (owned) -> double* (owned) */
    GHashTable *comp_roots; /* computation name (owned) -> its ROOT's name (owned) */
    double *current;      /* the open computation's sum, or NULL */
    bool in_frames;       /* past `FileNames`: the stack-frame index, skipped */
    uint64_t partitions, replicas; /* from the HloModule line, 0 when absent */
    uint64_t sharded;     /* the most devices a tiled sharding= names, 0 when none */
    bool seen_module, seen_entry; /* the HloModule line, an ENTRY computation */
    GArray *param_spaces;         /* int: entry parameter -> memory space */
    uint64_t open_line;           /* line of the open computation's header */
    char *open_name;              /* the open computation's name, NULL when none */
    xla_unknown element_operands; /* operands written NAME#INDEX (jaxlib 0.12), the first */
};

static void instr_free(gpointer p)
{
    xla_instr *i = p;
    g_free(i->name);
    g_free(i->opcode);
    g_strfreev(i->operands);
    g_free(i->replica_groups);
    g_free(i->pairs);
    if (i->elements)
        g_array_free(i->elements, TRUE);
    g_free(i->call_root);
    g_free(i);
}

xla_hlo *xla_hlo_new(void)
{
    xla_hlo *h = g_new0(xla_hlo, 1);
    h->instrs = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, instr_free);
    h->comp_flops = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    h->comp_roots = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
    return h;
}

void xla_hlo_free(xla_hlo *h)
{
    if (h == NULL)
        return;
    g_hash_table_destroy(h->instrs);
    g_hash_table_destroy(h->comp_flops);
    g_hash_table_destroy(h->comp_roots);
    if (h->param_spaces)
        g_array_free(h->param_spaces, TRUE);
    g_free(h->open_name);
    xla_unknown_clear(&h->element_operands);
    g_free(h);
}

int xla_hlo_parameter_space(const xla_hlo *h, uint64_t number)
{
    return h->param_spaces && number < h->param_spaces->len ? g_array_index(h->param_spaces, int, (guint)number) : 0;
}

/* entry_computation_layout={(SHAPE, SHAPE, ..., SHAPE)->RESULT} (XLA puts an index comment before every fifth):
 * each parameter's memory space, in order (unknown shapes: 0). */
static void read_entry_layout(xla_hlo *h, const char *line)
{
    const char *s = strstr(line, "entry_computation_layout={(");
    if (s == NULL)
        return;
    s += strlen("entry_computation_layout={(");
    h->param_spaces = g_array_new(FALSE, TRUE, sizeof(int));
    while (*s && *s != ')') {
        while (*s == ' ' || *s == ',')
            s++;
        if (xla_skip(s, "/*", &s)) {
            const char *close = strstr(s, "*/");
            if (close == NULL)
                return;
            s = close + 2;
            continue;
        }
        xla_shape shape;
        const char *end;
        if (*s == ')' || !xla_shape_parse(s, &end, &shape))
            return;
        int space = shape.is_tuple ? 0 : shape.memory_space;
        g_array_append_val(h->param_spaces, space);
        s = end;
    }
}

bool xla_hlo_finish(const xla_hlo *h, const char *file, GError **err)
{
    const char *what = !h->seen_module ? "expected an 'HloModule NAME, ...' line, found none (an empty file?)"
                       : h->current    ? "expected '}' closing the last computation, found the end of the file "
                                         "(a truncated dump?)"
                       : !h->seen_entry ? "expected an 'ENTRY' computation, found none (a truncated dump?)"
                                        : NULL;
    if (what)
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_INPUT, "%s: %s", file, what);
    return what == NULL;
}

void xla_hlo_counts(const xla_hlo *h, uint64_t *replicas, uint64_t *partitions, bool *from_sharding)
{
    bool stated = h->partitions || h->replicas;
    *replicas = h->replicas ? h->replicas : stated ? 1 : 0;
    *partitions = h->partitions ? h->partitions : stated ? 1 : h->sharded;
    *from_sharding = !stated && h->sharded > 1;
    if (*from_sharding && *replicas == 0)
        *replicas = 1; /* SPMD: the partitions are the devices */
}

uint64_t xla_hlo_devices(const xla_hlo *h)
{
    uint64_t r, p;
    bool from_sharding;
    xla_hlo_counts(h, &r, &p, &from_sharding);
    r = r ? r : 1;
    p = p ? p : 1;
    return r <= XLA_MESH_MAX_DEVICES && p <= XLA_MESH_MAX_DEVICES ? r * p : UINT64_MAX;
}

/* The devices a sharding= value names: the product of the dims of each
 * tiled `devices=[D,...]` in it (a tuple's elements each), the most of
 * them; 0 when it has none (replicated, maximal, manual). */
static uint64_t sharding_devices(const char *value, const char *end)
{
    uint64_t most = 0;
    for (const char *s = value; s < end && (s = g_strstr_len(s, end - s, "devices=[")) != NULL;) {
        s += strlen("devices=[");
        uint64_t product = 1, d;
        while (xla_parse_u64(&s, &d) && d > 0 && product <= XLA_MESH_MAX_DEVICES) {
            product *= d;
            if (*s != ',')
                break;
            s++;
        }
        if (*s == ']' && product <= XLA_MESH_MAX_DEVICES && product > most)
            most = product;
    }
    return most;
}

static const char *match_close(const char *s);

/* The end of a replica_groups= value at s: {{..},{..}}, [G,S]<=[..]T(..)
 * or mesh[..] {..}; NULL when none of those. */
static const char *groups_end(const char *s)
{
    if (*s == '{')
        return match_close(s);
    if (*s == '[') {
        const char *e = strchr(s, ']');
        e = e && e[1] == '<' && e[2] == '=' ? strchr(e + 3, ']') : NULL;
        if (e && e[1] == 'T' && e[2] == '(')
            e = strchr(e + 3, ')');
        return e ? e + 1 : NULL;
    }
    if (xla_skip(s, "mesh[", NULL)) {
        /* mesh[AXES][, device_ids=(IOTA)] {NAMES} (Mesh::ToString) */
        const char *e = strchr(s, ']');
        if (e && strncmp(e + 1, ", device_ids=", strlen(", device_ids=")) == 0) {
            /* to the ( )'s close, whatever the list's form: one this
             * reader cannot map leaves the collective a note (xla_mesh.c) */
            int depth = 0;
            for (e += 1 + strlen(", device_ids="); *e; e++) {
                depth += (*e == '(') - (*e == ')');
                if (depth == 0)
                    break;
            }
            e = *e == ')' ? e : NULL;
        }
        e = e && strncmp(e + 1, " {", 2) == 0 ? strchr(e + 3, '}') : NULL;
        return e ? e + 1 : NULL;
    }
    return NULL;
}

/* u64 after `key` in the HloModule line, 0 when absent. */
static uint64_t module_count(const char *line, const char *key)
{
    const char *s = strstr(line, key);
    uint64_t v = 0;
    if (s) {
        s += strlen(key);
        if (!xla_parse_u64(&s, &v))
            v = 0;
    }
    return v;
}

const xla_unknown *xla_hlo_element_operands(const xla_hlo *h)
{
    return &h->element_operands;
}

const xla_instr *xla_hlo_find(const xla_hlo *h, const char *name)
{
    return g_hash_table_lookup(h->instrs, name);
}

/* Past the group opened at s (one of ( [ {), skipping quoted strings. */
static const char *match_close(const char *s)
{
    int depth = 0;
    for (; *s; s++) {
        if (*s == '"') {
            for (s++; *s && *s != '"'; s++)
                if (*s == '\\' && s[1])
                    s++;
            if (*s == '\0')
                return NULL;
        } else if (*s == '(' || *s == '[' || *s == '{') {
            depth++;
        } else if ((*s == ')' || *s == ']' || *s == '}') && --depth == 0) {
            return s + 1;
        }
    }
    return NULL;
}

/* Operand texts `[SHAPE ]%?NAME` split at depth-0 commas; keeps the names.
 * XLA numbers every fifth operand with a comment glued to it, as in
 * `index=5` between slash-stars: the name starts after its last '/'. */
static char **split_operands(const char *s, const char *end)
{
    GPtrArray *names = g_ptr_array_new();
    const char *start = s;
    int depth = 0;
    for (const char *p = s; p <= end; p++) {
        if (p < end && (*p == '(' || *p == '[' || *p == '{'))
            depth++;
        else if (p < end && (*p == ')' || *p == ']' || *p == '}'))
            depth--;
        else if (p == end || (*p == ',' && depth == 0)) {
            const char *e = p;
            while (e > start && e[-1] == ' ')
                e--;
            const char *b = e;
            while (b > start && b[-1] != ' ' && b[-1] != '%' && b[-1] != '/')
                b--;
            if (e > b)
                g_ptr_array_add(names, g_strndup(b, (gsize)(e - b)));
            start = p + 1;
        }
    }
    g_ptr_array_add(names, NULL);
    return (char **)g_ptr_array_free(names, FALSE);
}

/* An operand written NAME#INDEX (jaxlib 0.12's get-tuple-element,
 * xla_hlo.h): *is_element true, and the shape of element INDEX of the
 * tuple-shaped instruction NAME defined so far, or NULL where NAME is none
 * or has no such element. A plain name: *is_element false, NULL. */
static const xla_shape *element_shape(const xla_hlo *h, const char *operand, bool *is_element)
{
    uint64_t element;
    char *base = xla_hlo_element_operand(operand, &element);
    const xla_instr *def = base ? xla_hlo_find(h, base) : NULL;
    *is_element = base != NULL;
    g_free(base);
    if (def == NULL || def->elements == NULL || element >= def->elements->len)
        return NULL;
    return &g_array_index(def->elements, xla_shape, (guint)element);
}

/* The shape of operand k: from the operand text when written inline, else
 * from its defining instruction. */
static bool operand_shape(const xla_hlo *h, const char *ops, const char *end, char **names, int k,
                          xla_shape *out)
{
    const char *p = ops;
    for (int i = 0; i < k && p < end; i++) {
        const char *next = p;
        int depth = 0;
        for (; next < end && !(*next == ',' && depth == 0); next++) {
            if (*next == '(' || *next == '[' || *next == '{')
                depth++;
            else if (*next == ')' || *next == ']' || *next == '}')
                depth--;
        }
        p = next < end ? next + 1 : end;
    }
    while (p < end && *p == ' ')
        p++;
    const char *e;
    if (p < end && *p != '%' && xla_shape_parse(p, &e, out) && e < end && *e == ' ')
        return true;
    for (int i = 0; i <= k; i++)
        if (names[i] == NULL)
            return false;
    bool is_element;
    const xla_shape *element = element_shape(h, names[k], &is_element);
    const xla_instr *def = is_element ? NULL : xla_hlo_find(h, names[k]);
    if (element == NULL && def == NULL)
        return false;
    *out = element ? *element : def->shape;
    return true;
}

char *xla_hlo_element_operand(const char *operand, uint64_t *element)
{
    const char *hash = strrchr(operand, '#');
    const char *p = hash ? hash + 1 : NULL;
    if (hash == NULL || hash == operand || !xla_parse_u64(&p, element) || *p != '\0')
        return NULL;
    return g_strndup(operand, (gsize)(hash - operand));
}

/* Operands written NAME#INDEX, where XLA of jaxlib 0.12 leaves a
 * get-tuple-element out of the printed HLO and its users name the tuple's
 * element: each must be element INDEX of a tuple-shaped instruction defined
 * before it; noted (counted, the first kept). */
static bool check_element_operands(xla_hlo *h, const xla_instr *in, const char *file, uint64_t lineno, GError **err)
{
    for (char **o = in->operands; *o; o++) {
        if (strchr(*o, '#') == NULL)
            continue;
        bool is_element;
        if (element_shape(h, *o, &is_element) == NULL)
            return strata_fail_at(err, file, lineno,
                                  "expected operand '%.60s' of '%s' to be NAME#INDEX, element INDEX of a tuple-shaped "
                                  "instruction defined before it", *o, in->name);
        xla_unknown_note(&h->element_operands, file, lineno, "operand", *o, strlen(*o));
    }
    return true;
}

/* Product of lhs dims listed after `key` as {1,2} or ["1","2"] (1 when
 * none: an outer product); -1 when a dimension is not one of lhs's. */
static double contracting(const char *attrs, const char *key, const xla_shape *lhs)
{
    const char *s = strstr(attrs, key);
    if (s == NULL)
        return 1;
    s += strlen(key);
    double k = 1;
    while (*s && *s != '}' && *s != ']') {
        uint64_t d;
        if (xla_parse_u64(&s, &d)) {
            if (d >= lhs->rank || d >= lhs->n_dims)
                return -1;
            k *= (double)lhs->dims[d];
        } else {
            s++;
        }
    }
    return k;
}

static double conv_flops(const char *attrs, const xla_shape *out, const xla_shape *kernel)
{
    const char *s = strstr(attrs, "dim_labels=");
    if (s == NULL)
        return 0;
    s = strchr(s + strlen("dim_labels="), '_');
    const char *arrow = s ? strstr(s, "->") : NULL;
    if (s == NULL || arrow == NULL)
        return 0;
    const char *o = memchr(s + 1, 'o', (size_t)(arrow - s - 1));
    uint64_t features = o ? xla_shape_dim(kernel, (uint32_t)(o - s - 1)) : 0;
    if (features == 0)
        return 0;
    return 2.0 * (double)out->elements * (double)kernel->elements / (double)features;
}

static bool is_elementwise(const char *op)
{
    static const char *const ops[] = {
        "add", "subtract", "multiply", "divide", "maximum", "minimum", "exponential", "log",
        "tanh", "rsqrt", "sqrt", "power", "logistic", "exponential-minus-one", "log-plus-one",
        "negate", "abs", "sine", "cosine", "atan2", "remainder", "cbrt", "erf", NULL};
    for (const char *const *p = ops; *p; p++)
        if (strcmp(op, *p) == 0)
            return true;
    return false;
}

/* The operand's shape or an error naming it (FLOPs need it). */
static bool need_shape(const xla_hlo *h, const xla_instr *in, const char *ops, const char *ops_end, int k,
                       xla_shape *out, const char *file, uint64_t lineno, GError **err)
{
    if (operand_shape(h, ops, ops_end, in->operands, k, out))
        return true;
    return strata_fail_at(err, file, lineno, "expected operand %d of %s '%s' to be defined before it (its shape gives the FLOPs)",
                    k, in->opcode, in->name);
}

static bool dot_flops(const xla_instr *in, const char *attrs, const char *key, const xla_shape *lhs, double *flops,
                      const char *file, uint64_t lineno, GError **err)
{
    double k = contracting(attrs, key, lhs);
    if (k < 0)
        return strata_fail_at(err, file, lineno,
                        "expected the contracting dimensions of '%s' below its lhs's rank %u, got one past it", in->name,
                        lhs->rank);
    *flops = 2.0 * (double)in->shape.elements * k;
    return true;
}

/* The instruction's FLOPs (xla_hlo.h's table); false with err at the line
 * when its operands, dimensions or called computation are not there. */
static bool instr_flops(const xla_hlo *h, const xla_instr *in, const char *ops, const char *ops_end, const char *attrs,
                        double *flops, const char *file, uint64_t lineno, GError **err)
{
    xla_shape a, b;
    const char *op = in->opcode;
    *flops = 0;
    if (strcmp(op, "dot") == 0)
        return need_shape(h, in, ops, ops_end, 0, &a, file, lineno, err) &&
               dot_flops(in, attrs, "lhs_contracting_dims={", &a, flops, file, lineno, err);
    if (strcmp(op, "convolution") == 0) {
        if (!need_shape(h, in, ops, ops_end, 1, &b, file, lineno, err))
            return false;
        *flops = conv_flops(attrs, &in->shape, &b);
        if (*flops == 0 && in->shape.elements > 0 && b.elements > 0)
            return strata_fail_at(err, file, lineno,
                            "expected dim_labels=LHS_KERNEL->OUT naming the kernel's output feature dimension 'o' "
                            "on convolution '%s'", in->name);
        return true;
    }
    if (strcmp(op, "custom-call") == 0 && (strstr(attrs, "$gemm") || strstr(attrs, "$lt$matmul")))
        return need_shape(h, in, ops, ops_end, 0, &a, file, lineno, err) &&
               dot_flops(in, attrs, "\"lhs_contracting_dimensions\":[", &a, flops, file, lineno, err);
    if (strcmp(op, "fusion") == 0) {
        const char *c = strstr(attrs, "calls=");
        if (c == NULL)
            return strata_fail_at(err, file, lineno, "expected calls=COMPUTATION on fusion '%s'", in->name);
        c += strlen("calls=");
        if (*c == '%')
            c++;
        size_t n = strcspn(c, ", ");
        char *name = g_strndup(c, n);
        const double *f = g_hash_table_lookup(h->comp_flops, name);
        bool ok = f != NULL && f != h->current;
        if (!ok)
            strata_fail_at(err, file, lineno, "expected calls=%s of fusion '%s' to name a computation defined before it", name,
                     in->name);
        g_free(name);
        if (ok)
            *flops = *f;
        return ok;
    }
    if (strcmp(op, "reduce") == 0) {
        if (!need_shape(h, in, ops, ops_end, 0, &a, file, lineno, err))
            return false;
        *flops = (double)a.elements;
        return true;
    }
    if (is_elementwise(op))
        *flops = (double)in->shape.elements;
    return true;
}

static bool bad_instr(const char *file, uint64_t lineno, const char *line, GError **err)
{
    return xla_fail_line(err, file, lineno, line, "an instruction '[ROOT ]NAME = SHAPE OPCODE(OPERANDS)...'");
}

static bool parse_instr(xla_hlo *h, const char *file, const char *line, uint64_t lineno, GError **err)
{
    const char *s = line;
    while (*s == ' ')
        s++;
    bool root = xla_skip(s, "ROOT ", &s);
    xla_skip(s, "%", &s);
    const char *eq = strstr(s, " = ");
    if (eq == NULL || eq == s)
        return bad_instr(file, lineno, line, err);
    xla_instr *in = g_new0(xla_instr, 1);
    in->name = g_strndup(s, (gsize)(eq - s));
    in->tuple_index = -1;
    s = eq + 3;
    const char *open = NULL, *close = NULL, *shape_text = s;
    if (xla_shape_parse(s, &s, &in->shape) && *s == ' ' && (open = strchr(s + 1, '(')) != NULL)
        close = match_close(open);
    if (close && in->shape.is_tuple) {
        in->elements = g_array_new(FALSE, FALSE, sizeof(xla_shape));
        if (!xla_shape_elements(shape_text, in->elements)) {
            g_array_free(in->elements, TRUE);
            in->elements = NULL;
        }
    }
    if (close == NULL || strchr(in->name, ' ')) {
        instr_free(in);
        return bad_instr(file, lineno, line, err);
    }
    in->opcode = g_strndup(s + 1, (gsize)(open - s - 1));
    bool literal = strcmp(in->opcode, "constant") == 0 || strcmp(in->opcode, "parameter") == 0;
    in->operands = literal ? g_new0(char *, 1) : split_operands(open + 1, close - 1);
    if (!check_element_operands(h, in, file, lineno, err)) {
        instr_free(in);
        return false;
    }
    const char *attrs = close;
    const char *idx = strstr(attrs, "index=");
    if (strcmp(in->opcode, "get-tuple-element") == 0 && idx) {
        uint64_t v;
        idx += strlen("index=");
        if (xla_parse_u64(&idx, &v) && v < INT64_MAX)
            in->tuple_index = (int64_t)v;
    }
    const char *rg = strstr(attrs, "replica_groups=");
    if (rg) {
        rg += strlen("replica_groups=");
        const char *end = groups_end(rg);
        if (end == NULL) {
            instr_free(in);
            return xla_fail_line(err, file, lineno, line,
                                 "replica_groups={{...},...}, [G,S]<=[DIMS][T(PERM)] or mesh['A'=N,...] {'A',...}");
        }
        in->replica_groups = g_strndup(rg, (gsize)(end - rg));
        char *why = NULL;
        /* the module's devices; 0 (unknown) when its line gives neither count */
        uint64_t r = h->replicas ? h->replicas : 1, p = h->partitions ? h->partitions : 1;
        uint64_t all = !h->replicas && !h->partitions                               ? 0
                       : r <= XLA_MESH_MAX_DEVICES && p <= XLA_MESH_MAX_DEVICES ? r * p
                                                                                  : UINT64_MAX;
        if (!xla_groups_check(in->replica_groups, all, &why)) {
            bool ok = strata_fail_at(err, file, lineno, "replica_groups=%s of '%s': expected %s", in->replica_groups,
                                     in->name, why);
            g_free(why);
            instr_free(in);
            return ok;
        }
    }
    in->channel = strstr(attrs, ", channel_id=") != NULL;
    in->global_ids = strstr(attrs, ", use_global_device_ids=true") != NULL;
    const char *sh = strstr(attrs, ", sharding={");
    const char *sh_end = sh ? match_close(sh + strlen(", sharding=")) : NULL;
    if (sh_end) {
        uint64_t n = sharding_devices(sh, sh_end);
        h->sharded = n > h->sharded ? n : h->sharded;
    }
    const char *sp = strstr(attrs, "source_target_pairs=");
    if (sp) {
        sp += strlen("source_target_pairs=");
        const char *end = *sp == '{' ? match_close(sp) : NULL;
        if (end == NULL) {
            instr_free(in);
            return xla_fail_line(err, file, lineno, line, "source_target_pairs={{S,T},...}");
        }
        in->pairs = g_strndup(sp, (gsize)(end - sp));
    }
    if (!instr_flops(h, in, open + 1, close - 1, attrs, &in->flops, file, lineno, err)) {
        instr_free(in);
        return false;
    }
    if (!strata_trace_flops_ok(in->flops)) {
        bool ok = strata_fail_at(err, file, lineno,
                           "expected at most %g FLOPs for '%s' (a trace's flops= range), its shapes give %g",
                           STRATA_TRACE_MAX_FLOPS, in->name, in->flops);
        instr_free(in);
        return ok;
    }
    if (g_hash_table_contains(h->instrs, in->name)) {
        bool ok = strata_fail_at(err, file, lineno, "expected unique instruction names, got a second '%s'", in->name);
        instr_free(in);
        return ok;
    }
    if (h->current)
        *h->current += in->flops;
    if (root && h->open_name)
        g_hash_table_replace(h->comp_roots, g_strdup(h->open_name), g_strdup(in->name));
    const char *callee = strcmp(in->opcode, "call") == 0 ? strstr(attrs, "to_apply=") : NULL;
    if (callee) {
        callee += strlen("to_apply=");
        xla_skip(callee, "%", &callee);
        char *name = g_strndup(callee, strcspn(callee, ", "));
        in->call_root = g_strdup(g_hash_table_lookup(h->comp_roots, name));
        g_free(name);
    }
    g_hash_table_insert(h->instrs, in->name, in);
    return true;
}

/* The stack-frame index that recent XLA prints after the computations. */
static bool is_frame_section(const char *line)
{
    return strcmp(line, "FileNames") == 0 || strcmp(line, "FunctionNames") == 0 ||
           strcmp(line, "FileLocations") == 0 || strcmp(line, "StackFrames") == 0;
}

bool xla_hlo_feed(xla_hlo *h, const char *file, const char *line, uint64_t lineno, GError **err)
{
    /* The index's sections hold numbered lines and end at a blank line;
     * XLA 0.4.3x and later print them before the computations. */
    if (is_frame_section(line)) {
        h->in_frames = true;
        return true;
    }
    if (h->in_frames) {
        if (line[0] == '\0')
            h->in_frames = false;
        else if (!g_ascii_isdigit(line[0]))
            return xla_fail_line(err, file, lineno, line, "a numbered line of the stack-frame index ('N ...') or a blank line");
        return true;
    }
    if (xla_skip(line, "HloModule ", NULL)) {
        h->seen_module = true;
        if (h->param_spaces == NULL)
            read_entry_layout(h, line);
        h->partitions = module_count(line, "num_partitions=");
        h->replicas = module_count(line, "replica_count=");
        return true;
    }
    if (line[0] == '\0')
        return true;
    if (line[0] == ' ')
        return parse_instr(h, file, line, lineno, err);
    /* XLA before jaxlib 0.5 closes a computation with `} // NAME`. */
    const char *closer;
    if (strcmp(line, "}") == 0 || xla_skip(line, "} // ", &closer)) {
        if (line[1] != '\0' && (h->open_name == NULL || strcmp(closer, h->open_name) != 0))
            return strata_fail_at(err, file, lineno, "expected '}' or '} // %s' closing the computation opened at line %"
                                  G_GUINT64_FORMAT ", got '} // %.60s'", h->open_name ? h->open_name : "NAME",
                                  h->open_line, closer);
        h->current = NULL;
        g_free(h->open_name);
        h->open_name = NULL;
        return true;
    }
    size_t n = strlen(line);
    if (line[n - 1] == '{') {
        const char *s = line;
        xla_skip(s, "ENTRY ", &s);
        xla_skip(s, "%", &s);
        size_t len = strcspn(s, " (");
        if (len > 0) {
            if (h->current)
                return strata_fail_at(err, file, lineno, "expected '}' closing the computation opened at line %" G_GUINT64_FORMAT
                                " before another one", h->open_line);
            h->seen_entry |= xla_skip(line, "ENTRY ", NULL);
            h->open_line = lineno;
            g_free(h->open_name);
            h->open_name = g_strndup(s, len);
            double *sum = g_new0(double, 1);
            g_hash_table_replace(h->comp_flops, g_strndup(s, len), sum);
            h->current = sum;
            return true;
        }
    }
    return xla_fail_line(err, file, lineno, line,
                         "'HloModule ...', a computation 'NAME (PARAMS) -> SHAPE {', an instruction or '}'");
}
