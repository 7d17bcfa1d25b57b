/*
 * test_hardening_fifteenth.c: the fifteenth hardening pass (wave 35;
 * docs/reliability.md, "The fifteenth pass"), a row per case: each refused
 * row was a silent default at exit 0 (or a refusal that named the wrong
 * cause); the rows at 0 are what stays taken.
 *
 *  - the fourteenth pass's leftovers: a hardware file of one AMD device
 *    (mi300x.ini) read as CUDA's; --num-scheduler-steps under an engine
 *    row without multi-step scheduling; a key file handed over as text
 *    not held to the newline rule;
 *  - what the pass found besides (see the tests' comments).
 *
 * Every CLI row runs in a fresh directory through /bin/sh ($S strata, $H
 * configs/hw); after a refusal the directory holds no output (out.*) and
 * no temporary (outfile.c's ".BASENAME.XXXXXX").
 */
#include "hardening_rows.h"
#include "hw/hw.h"
#include "sweep/experiment.h"

/* A hardware file d.ini on configs/hw/BASE whose [hardware] group also
 * sets the lines given (line 4 on), served llama-3-8b (the options follow). */
#define VENDOR_HW(base, lines) "printf '[hardware]\\nbase = %s/" base "\\nname = d\\n" lines "' \"$H\" > d.ini; " \
                               "\"$S\" serve -q --hw d.ini --model llama-3-8b --poisson n=2 --json out.json "
/* The same on mi300x-8.ini (RCCL; itself on mi300x.ini, copied beside it), the line given after its name (line
 * 31 of d.ini). */
#define VENDOR_MI300X_8(line) "cp \"$H/mi300x.ini\" .; sed 's/^name = mi300x-8$/&\\n" line "/' \"$H/mi300x-8.ini\" " \
                              "> d.ini; \"$S\" serve -q --hw d.ini --model llama-3-8b --poisson n=2 --json out.json "

/* The ROCm test was the collectives' library (RCCL), so a file of one
 * AMD device, which has no collectives (mi300x.ini), read as CUDA's: the
 * TensorRT-LLM rows ran there, vLLM's took their CUDA kernels, and
 * --prefill-decode-attention (vLLM's ROCm build) was refused as "non-RCCL".
 * Now [hardware] vendor (amd, nvidia or google) says whose device it is
 * (hw_vendor.c), mi300x.ini says amd, and a file that gives none is read
 * from its library as before (RCCL: AMD). A vendor at odds with the
 * library (RCCL builds for AMD GPUs only, NCCL for NVIDIA's) is refused
 * at its line. */
STRATA_ROWS_TEST(vendor_decides_rocm,
    {HR_SERVE("mi300x.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine trtllm", 2,
     "--engine trtllm: its decode attention kernel xqa is CUDA's (TensorRT-LLM and LMDeploy TurboMind build for "
     "NVIDIA GPUs only), and this hardware is AMD's (ROCm: vendor = amd or collectives = rccl)"},
    {HR_SERVE("mi300x.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine turbomind", 2,
     "--engine turbomind: its decode attention kernel turbomind-v0.1 is CUDA's"},
    {VENDOR_MI300X_8("vendor = nvidia"), 2,
     "(override d.ini:31): [hardware] vendor: expected amd, as the collectives are rccl's (RCCL builds for AMD GPUs "
     "only), got 'nvidia'"},
    {VENDOR_HW("dgx-h100.ini", "vendor = amd\\n"), 2,
     "(override d.ini:4): [hardware] vendor: expected nvidia, as the collectives are nccl's (NCCL builds for NVIDIA "
     "GPUs only), got 'amd'"},
    {VENDOR_HW("h100.ini", "vendor = AMD\\n"), 2,
     "(override d.ini:4): [hardware] vendor: expected amd, nvidia or google (whose device the file describes), got "
     "'AMD'"},
    {VENDOR_HW("h100.ini", "vendor =\\n"), 2, "(override d.ini:4): [hardware] vendor: expected amd, nvidia or google"},
    /* what stays taken: vLLM V1's ROCm setting on the one MI300X (refused there before), vLLM's and SGLang's
     * rows there, TensorRT-LLM on a file of one NVIDIA device that says so, an RCCL file that says amd too */
    {HR_SERVE("mi300x.ini") "--model llama-3-8b --poisson n=2 --json out.json --prefill-decode-attention", 0, NULL},
    {HR_SERVE("mi300x.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine vllm-v0.5", 0, NULL},
    {HR_SERVE("mi300x.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine sglang-v0.4", 0, NULL},
    {VENDOR_HW("h100.ini", "vendor = nvidia\\n") "--engine trtllm", 0, NULL},
    {VENDOR_MI300X_8("vendor = amd  # as mi300x.ini") "--prefill-decode-attention", 0, NULL},
)

/* --num-scheduler-steps N was taken under every engine row: the rows
 * without vLLM V0's multi-step mode (SGLang's, TensorRT-LLM's,
 * TurboMind's, overlap) and their schedulers read it nowhere, so N changed
 * nothing at exit 0. Multi-step scheduling is vLLM V0's alone
 * (vllm-project/vllm PR #7000, --num-scheduler-steps); SGLang 0.4's
 * server_args, TensorRT-LLM's and LMDeploy's engines have no such option
 * (serve_args.c). */
STRATA_ROWS_TEST(scheduler_steps_only_where_read,
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine sglang-v0.4 "
     "--num-scheduler-steps 4", 2,
     "--num-scheduler-steps 4: expected --engine vllm-v0 or vllm-v0.5 (vLLM V0's multi-step scheduling) or a "
     "vllm-v0 scheduler, which read it; --engine sglang-v0.4 with --scheduler sglang-v0.4 reads neither (its "
     "engine has no multi-step scheduling)"},
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine trtllm-cpp "
     "--num-scheduler-steps 8", 2, "--engine trtllm-cpp with --scheduler trtllm-no-evict-unchunked reads neither"},
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine overlap "
     "--num-scheduler-steps 2", 2, "--engine overlap with --scheduler vllm-v1 reads neither"},
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine turbomind "
     "--sweep num_scheduler_steps=1,2", 2, "--sweep: --num-scheduler-steps 2: expected --engine vllm-v0"},
    /* what stays taken: vLLM V0's rows, 1 under any row, the vllm-v0 scheduler under engine none */
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine vllm-v0.5 "
     "--num-scheduler-steps 4", 0, NULL},
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine sglang-v0.4 "
     "--num-scheduler-steps 1", 0, NULL},
    {HR_SERVE("h100.ini") "--model llama-3-8b --poisson n=2 --json out.json --engine none --scheduler vllm-v0 "
     "--num-scheduler-steps 4", 0, NULL},
)

/* A key file handed over as text (strata_hw_load_data: calibrate's
 * output, a derived model's text; strata_experiment_load_data) was not
 * held to the newline rule the files are (the fourteenth pass): a text cut
 * inside its last key line read as another value. Every such text the
 * program writes ends its lines (g_key_file_to_data, calibrate's
 * backends), so the rule is the same: refused at the line, with the
 * origin the text was given. A last comment without newline stays read. */
START_TEST(text_held_to_the_newline_rule)
{
    GError *err = NULL;
    const char *hw = "[hardware]\nname = t\n[memory hbm]\nkind = device\nbandwidth = 1TB/s\ncapacity = 8";
    ck_assert_ptr_null(strata_hw_load_data(hw, "t.ini", NULL, &err));
    ck_assert_msg(err && strstr(err->message, "t.ini:6: expected the line to end with a newline, got the end of the "
                                              "file inside it (a key file cut short?)"),
                  "%s", err ? err->message : "(no error)");
    g_clear_error(&err);
    char *whole = g_strconcat(hw, "GiB\n# end", NULL);
    strata_hw *ok = strata_hw_load_data(whole, "t.ini", NULL, &err);
    ck_assert_msg(ok, "%s", err ? err->message : "");
    strata_hw_free(ok);
    g_free(whole);
    ck_assert_ptr_null(strata_experiment_load_data("[experiment]\nname = e\ntrace = t", "e.ini", &err));
    ck_assert_msg(err && strstr(err->message, "e.ini:3: expected the line to end with a newline"), "%s",
                  err ? err->message : "(no error)");
    g_clear_error(&err);
}
END_TEST

/* A hardware file d.ini on configs/hw/BASE (one node: no [network NAME]) whose interconnect GROUP sets the line
 * given (line 5 of d.ini), checked with a trace of one buffer. */
#define ONE_NODE(base, group, line) "printf '[hardware]\\nbase = %s/" base "\\nname = d\\n[interconnect " group "]\\n" \
                                    line "\\n' \"$H\" > d.ini; " HR_TRACE "\"$S\" check --hw d.ini --trace t.trace"

/* Found by the hunt: the keys of steps across nodes that a file of one
 * node took and read nowhere. nccl_net_protocol (a network message's
 * protocol: net_protocol.h; coll_impl_nccl.c reads it only where the
 * communicator spans nodes), nccl_ring_wait (what a ring's LL or LL128
 * step across nodes waits for: algo_nccl.c, rings over several domains
 * only) and nccl_cpu / rccl_cpu (the hosts' CPU: NCCL's network overhead
 * and its LL cap across nodes, nccl_tuning.c, tuning.cc's index by nNodes
 * > 1; RCCL's network overhead, rccl_tuning.c; the NVLS_TREE correction,
 * across nodes too) changed nothing in a file with no [network NAME], at
 * exit 0. Refused there, as nccl_net_latency and the other keys of
 * transfers across nodes already were (hw_network_keys_unset). */
STRATA_ROWS_TEST(network_keys_in_one_node,
    {ONE_NODE("dgx-h100.ini", "nvlink", "nccl_net_protocol = efa-rdm-cuda"), 2,
     "(override d.ini:5): [interconnect nvlink] nccl_net_protocol: expected no such key in a file with no [network "
     "NAME]: it is of transfers across nodes"},
    {ONE_NODE("dgx-h100.ini", "nvlink", "nccl_ring_wait = channel"), 2,
     "[interconnect nvlink] nccl_ring_wait: expected no such key in a file with no [network NAME]"},
    {ONE_NODE("dgx-h100.ini", "nvlink", "nccl_cpu = amd"), 2,
     "[interconnect nvlink] nccl_cpu: expected no such key in a file with no [network NAME]"},
    {"cp \"$H/mi300x.ini\" .; sed 's/^collectives = rccl$/&\\nrccl_cpu = intel/' \"$H/mi300x-8.ini\" > d.ini; "
     HR_TRACE "\"$S\" check --hw d.ini --trace t.trace", 2,
     "[interconnect xgmi] rccl_cpu: expected no such key in a file with no [network NAME]"},
    /* what stays taken: the same keys in files with a network (gb200-nvl72.ini sets nccl_cpu = arm) */
    {HR_TRACE "\"$S\" check --hw \"$H/gb200-nvl72.ini\" --trace t.trace", 0, NULL},
    {"cp \"$H/dgx-h100.ini\" .; sed 's/^\\[network ib\\]$/nccl_ring_wait = channel\\nnccl_cpu = amd\\n&/' "
     "\"$H/h100-2x8-ib.ini\" > d.ini; grep -q '^nccl_cpu = amd' d.ini && " HR_TRACE "\"$S\" check --hw d.ini --trace "
     "t.trace", 0, NULL},
)

int main(void)
{
    const TTest *const tests[] = {
        vendor_decides_rocm,
        scheduler_steps_only_where_read,
        text_held_to_the_newline_rule,
        network_keys_in_one_node,
        NULL,
    };
    return strata_hardening_main("fifteenth", tests);
}
