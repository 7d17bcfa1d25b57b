/*
 * serve_sched_sglang04.c: SGLang 0.4's scheduler (serve_scheduler.h's
 * sglang-v0.4 row), as SGLang 0.4.0 runs it, read from its PyPI wheel
 * (sglang-0.4.0-py3-none-any.whl, tag v0.4.0): sglang/srt/managers/
 * scheduler.py, schedule_policy.py, schedule_batch.py, tp_worker.py,
 * sglang/srt/server_args.py, sglang/global_config.py. It runs
 * serve_sched_sglang.c's core (0.3.0's policy, whose comment gives the
 * step, the PrefillAdder and the retraction) with what 0.4.0 changed:
 *
 * - batch_is_full (scheduler.py:801-810, 850-859): get_new_batch_prefill
 *   returns nothing while batch_is_full holds and no cut prefill goes on;
 *   it is set when the running batch holds max_running_requests, when the
 *   loop over the waiting queue finds running + taken >=
 *   max_running_requests (checked before each request), and when
 *   add_one_req answers NO_TOKEN (a request refused for tokens, or
 *   budget_state's rem_total_tokens <= 0 after one was taken); it is
 *   cleared when the cut request moves out of the last batch
 *   (get_next_batch_to_run, :771-777) and when update_running_batch's
 *   filter_batch or retract_decode shrinks the running batch (:915-946).
 *   0.3.0 tried a prefill at every step. So once a request is refused for
 *   tokens, 0.4 admits none until a running request finishes (or is
 *   retracted), where 0.3 retried as new_token_ratio decayed.
 * - new_token_ratio (scheduler.py:301-318, global_config.py:17-25):
 *   init_new_token_ratio 0.7 x schedule_conservativeness (1.0), the floor
 *   0.7 x 0.14 = 0.098, the decay (0.7 - 0.098) / 600 = 0.0010033 a decode
 *   step (0.3.0: 0.1 and 0.001).
 * - retract_decode (schedule_batch.py:818-899) retracts at least one
 *   request when it runs (first_iter), then until the free tokens reach 20
 *   per request left; 0.3.0 stopped as soon as they did.
 * - add_one_req_ignore_eos (schedule_policy.py:207-280; 0.3.0 has none):
 *   a request with ignore_eos while the radix cache is off (ChunkCache's
 *   disable, mem_cache/chunk_cache.py:24, the cache --disable-radix-cache
 *   builds with chunked prefill, scheduler.py:231-240) is admitted by a
 *   look ahead instead of the expected-output estimate: every request with
 *   tokens left (its own, the running batch's, those taken this step), in
 *   order of tokens left, run to its end, the free tokens less the inputs
 *   taken and its prompt plus what those finished free must stay above
 *   the decode steps to come x the requests left; no max_prefill_tokens
 *   check. sglang.bench_serving sends ignore_eos by default
 *   (bench_serving.py:145-165), and strata's requests always run to their
 *   output length: strata takes this path whenever prefix caching is off
 *   (--no-prefix-caching, SGLang's --disable-radix-cache). The source's
 *   quirks are kept: the decode steps are the next entry's tokens left,
 *   and an entry with more left than all is inserted before the last.
 * Unchanged from 0.3.0, read again in 0.4.0: PrefillAdder's budgets
 * (schedule_policy.py:121-151, 282-336: the free tokens less the running
 * requests' min(max_new_tokens - outputs, 4096) x new_token_ratio, each
 * added request's input + min(max_new_tokens, 4096); its cur_rem_tokens
 * never binds first), the cut request first (add_being_chunked_req),
 * chunked_prefill_size 8192 (server_args.py:171-175, for a GPU of 25 GB or
 * more; 2048 below, not modelled: the row's budget has no device),
 * max_prefill_tokens 16384 (:64), a prefill batch run alone
 * (enable_mixed_chunk off, :129), check_decode_mem (schedule_batch.py:
 * 806-816), the retraction order and the new ratio after it, the idle
 * server's reset to init_new_token_ratio (event_loop_overlap, :429-432).
 * The lpm policy sorts by cached prefix (and in 0.4.0 falls back to fcfs
 * above 128 waiting requests, schedule_policy.py calc_priority): strata
 * keeps queue order, as for 0.3.
 *
 * What the overlap scheduler changes (event_loop_overlap, scheduler.py:
 * 399-434) is the engine row's, not this file's: step n+1 is scheduled
 * before step n's results are processed, so a request done at step n is
 * still in step n+1's decode batch (its extra token freed,
 * process_batch_result_decode :1109-1112) and its KV is freed only then:
 * the sglang-v0.4 engine row's overlap_lag. Where step n+1 is a prefill,
 * the finished request leaves without that decode (serve_sched_sglang.c's
 * serve_drop_lagged). And step n+1 is formed with the requests received while
 * the GPU runs step n, once step n-1's results are processed: one that
 * arrives later joins step n+2 (the row's recv_lag, serve_sched.c).
 *
 * Invariants: as serve_sched_sglang.c's; batch_is_full is false whenever
 * no request runs.
 */
#include "serve/serve_run.h"

/* global_config.py:17-25 and scheduler.py:305-317 at schedule_conservativeness
 * 1.0: init 0.7, floor 0.7 x 0.14, decay (init - floor) / 600 */
#define SGL04_INIT 0.7
#define SGL04_MIN (SGL04_INIT * 0.14)
static const serve_sgl_rules sgl_v04 = {SGL04_INIT, SGL04_MIN, (SGL04_INIT - SGL04_MIN) / 600.0, true, true, true};

void serve_schedule_sglang04(serve_state *st) { serve_schedule_sglang_rules(st, &sgl_v04); }
