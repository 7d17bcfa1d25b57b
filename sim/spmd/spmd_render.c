/*
 * spmd_render.c: the SPMD expansion's rendering (contract in
 * spmd_internal.h): one emit record, or a plain op's device, into the one
 * reusable output op, its names in the state's reusable GStrings.
 *
 * Invariant: no heap is touched per op once the buffers have grown.
 */
#include "spmd/spmd_internal.h"
#include <string.h>
#include "spmd/spmd_names.h"

/* ---- names ------------------------------------------------------------ */

/* The instance on `device` of memory (or unit) `name`, as the model names it
 * (strata_hw_instance_name). */
static const char *instance_of(spmd *s, const char *name, uint32_t device, bool unit)
{
    return strata_hw_instance_name(s->hw, name, device, unit, s->strs[STR_MEMORY]);
}

/* ---- rendering -------------------------------------------------------- */

void spmd_render_plain(spmd *s, uint32_t d)
{
    const strata_op *in = s->cur;
    strata_op *o = &s->out;
    *o = *in;
    o->has_device = true; /* the device that runs it: a field of every op handed out */
    o->device = d;
    strata_spmd_name(s->strs[STR_STREAM], in->stream, d);
    o->stream = s->strs[STR_STREAM]->str;
    if (in->kind == STRATA_OP_COMPUTE) {
        o->unit = instance_of(s, in->unit, d, true);
        o->ins = strata_spmd_name_list(s->s_lists[0], s->lists[0], in->ins, in->n_ins, d);
        o->outs = strata_spmd_name_list(s->s_lists[1], s->lists[1], in->outs, in->n_outs, d);
        o->donates = strata_spmd_name_list(s->s_lists[2], s->lists[2], in->donates, in->n_donates, d);
        return;
    }
    if (in->name && in->kind != STRATA_OP_RELEASE) {
        strata_spmd_name(s->strs[STR_NAME], in->name, d);
        o->name = s->strs[STR_NAME]->str;
    }
    if (in->src) {
        strata_spmd_name(s->strs[STR_SRC], in->src, d);
        o->src = s->strs[STR_SRC]->str;
    }
    if (in->kind == STRATA_OP_ALLOC || (in->kind == STRATA_OP_RELEASE && in->memory))
        o->memory = instance_of(s, in->memory, d, false);
}

static void buffer_name(spmd *s, GString *into, unsigned buf, uint32_t lane, uint32_t device)
{
    if (buf == TMP_BUF)
        strata_spmd_lane_name(into, s->cur->stream, lane, STRATA_SPMD_RECV, device);
    else if (buf == STRATA_COLL_OUT || s->cur->kind == STRATA_OP_ALL_REDUCE)
        strata_spmd_name(into, s->cur->name, device);
    else
        strata_spmd_name(into, s->cur->src, device);
}

/* The launch op's time on device d: the library's fixed cost, after the
 * host's work for the other communicators of d's process that comes first
 * (coll_host.h). */
double spmd_launch_time(const spmd *s, uint32_t d)
{
    return s->launch_s + strata_coll_host_delay(&s->host, d);
}

double spmd_floor_time(const spmd *s, uint32_t d)
{
    return MAX(0.0, strata_coll_host_floor(&s->host) - spmd_launch_time(s, d));
}

void spmd_render_step(spmd *s, const emit *e)
{
    strata_op *o = &s->out;
    memset(o, 0, sizeof *o);
    o->line = s->cur->line;
    o->has_device = true;
    o->device = e->device;
    uint32_t lane = e->kind == EM_ALLOC_TMP || e->kind == EM_FREE_TMP ? 0 : e->lane;
    strata_spmd_lane_name(s->strs[STR_STREAM], s->cur->stream, lane, NULL, e->device);
    o->stream = s->strs[STR_STREAM]->str;
    switch ((emit_kind)e->kind) {
    case EM_ALLOC_TMP:
    case EM_FREE_TMP:
        o->kind = e->kind == EM_ALLOC_TMP ? STRATA_OP_ALLOC : STRATA_OP_FREE;
        strata_spmd_lane_name(s->strs[STR_NAME], s->cur->stream, e->lane, STRATA_SPMD_RECV, e->device);
        o->name = s->strs[STR_NAME]->str;
        if (o->kind == STRATA_OP_ALLOC) {
            o->size = e->bytes;
            o->tag = STRATA_TAG_TEMP;
            o->memory = instance_of(s, NULL, e->device, false);
        }
        break;
    case EM_RECORD:
    case EM_WAIT:
        o->kind = e->kind == EM_RECORD ? STRATA_OP_RECORD : STRATA_OP_WAIT;
        if (e->bytes > 0) /* a paced phase's ends, a fence of its collective (end_round, sync_groups) */
            s->last = (strata_spmd_step){s->info->desc.index + 1, 0, 0, e->bytes};
        strata_spmd_lane_name(s->strs[STR_NAME], s->cur->stream, e->peer_lane, STRATA_SPMD_ROUND, e->peer);
        o->name = s->strs[STR_NAME]->str;
        break;
    case EM_LAUNCH: /* the collective's kernel launch: a compute op of that time */
    case EM_DELAY:  /* a step's fixed cost (strata_coll_step.delay_s, in ps in bytes) */
    case EM_FLOOR:  /* the host's floor of back-to-back calls, beside the steps */
        o->kind = STRATA_OP_COMPUTE;
        s->last.coll = s->info->desc.index + 1;
        o->name = e->kind == EM_LAUNCH ? "launch" : e->kind == EM_FLOOR ? "host-floor" : "step-delay";
        o->has_time = true;
        o->time_s = e->kind == EM_LAUNCH  ? spmd_launch_time(s, e->device)
                    : e->kind == EM_FLOOR ? spmd_floor_time(s, e->device)
                                          : (double)e->bytes * 1e-12;
        o->unit = instance_of(s, NULL, e->device, true);
        break;
    case EM_COPY:
        o->kind = STRATA_OP_COPY;
        s->last = (strata_spmd_step){s->info->desc.index + 1, e->phase, s->classes ? e->from + 1 : 0, 0};
        buffer_name(s, s->strs[STR_NAME], e->dst_buf, e->dst_buf == TMP_BUF ? e->peer_lane : e->lane, e->device);
        buffer_name(s, s->strs[STR_SRC], e->src_buf, e->lane, e->peer);
        o->name = s->strs[STR_NAME]->str;
        o->src = s->strs[STR_SRC]->str;
        o->has_bytes = true;
        o->bytes = e->bytes;
        break;
    case EM_REDUCE: {
        o->kind = STRATA_OP_COMPUTE;
        s->last = (strata_spmd_step){s->info->desc.index + 1, e->phase, 0, 0};
        o->name = strata_op_kind_name(s->cur->kind);
        GPtrArray *strs = s->s_lists[0];
        while (strs->len < 3)
            g_ptr_array_add(strs, g_string_new(NULL));
        buffer_name(s, g_ptr_array_index(strs, 0), TMP_BUF, e->peer_lane, e->device);
        buffer_name(s, g_ptr_array_index(strs, 1), e->own_buf, e->lane, e->device);
        buffer_name(s, g_ptr_array_index(strs, 2), e->dst_buf, e->lane, e->device);
        GPtrArray *ins = s->lists[0], *outs = s->lists[1];
        g_ptr_array_set_size(ins, 0);
        g_ptr_array_set_size(outs, 0);
        g_ptr_array_add(ins, ((GString *)g_ptr_array_index(strs, 0))->str);
        g_ptr_array_add(ins, ((GString *)g_ptr_array_index(strs, 1))->str);
        g_ptr_array_add(ins, NULL);
        g_ptr_array_add(outs, ((GString *)g_ptr_array_index(strs, 2))->str);
        g_ptr_array_add(outs, NULL);
        o->ins = (const char *const *)ins->pdata;
        o->n_ins = 2;
        o->outs = (const char *const *)outs->pdata;
        o->n_outs = 1;
        o->has_flops = true;
        o->flops = (double)e->bytes / s->bytes_per_element;
        o->has_bytes = true;
        o->bytes = 3 * e->bytes;
        o->unit = instance_of(s, NULL, e->device, true);
        break;
    }
    default:
        break;
    }
}
