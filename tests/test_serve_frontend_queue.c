/*
 * test_serve_frontend_queue.c: the API server as a serial server
 * (serve_frontend_queue.h) against values derived by hand.
 */
#include "serve/serve_engine.h"
#include "serve/serve_frontend.h"
#include "serve/serve_frontend_queue.h"
#include "testutil.h"

/* vLLM V1's serial row (--serial-api-server; "vllm-v1" itself has none): PR #17546's one API server, 130.74 s /
 * 10000 requests = 13.074 ms a request (an upper bound: the benchmark's whole duration), of which ShareGPT's 202
 * output chunks (PR #12287: 1,211,959 tokens / 6000 requests) at 30 us each (sglang #10186) = 6.060 ms, so
 * intake_s = 7.014 ms, chunk_s = 0.030 ms; recv(4) = 5.07984 ms (test_serve_frontend.c), shorter than the intake:
 * a request is handed on when its intake ends, max(5.07984, 7.014) = 7.014 ms after its intake's start.
 * A burst of 4 requests of 4 tokens sent at 0: taken at 0, 7.014, 14.028, 21.042 ms, each reaching the scheduler
 * 7.014 ms later: 7.014, 14.028, 21.042, 28.056 ms; the server is free at 4 x 7.014 = 28.056 ms.
 * A chunk whose step ended at 20 ms waits behind the intakes: written from 28.056 ms, free at 28.086 ms; one
 * ready at 30 ms finds it free: 30 ms, free at 30.030 ms. A fifth request sent at 1 s: 1.007014 s, free at
 * 1.007014 s. So a burst of N is taken in over N x 7.014 ms, and the chunks of a step queue behind it. */
START_TEST(burst_through_a_serial_server)
{
    const strata_serve_frontend *v1 = strata_serve_engine_frontend(NULL), *f = strata_serve_frontend_serial_row(v1);
    ck_assert(!strata_serve_frontend_serial(v1) && strata_serve_frontend_serial(f)); /* off unless asked */
    ck_assert_str_eq(f->name, "vllm-v1-serial");
    ck_assert_double_eq_tol(f->intake_s, 7.014e-3, 1e-15);
    ck_assert_double_eq_tol(f->chunk_s, 30e-6, 1e-18);
    double free_at = 0;
    const double want[4] = {7.014e-3, 14.028e-3, 21.042e-3, 28.056e-3};
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(strata_serve_frontend_take(f, &free_at, 0, 4), want[k], 1e-15);
    ck_assert_double_eq_tol(free_at, 28.056e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_chunk(f, &free_at, 20e-3), 28.056e-3, 1e-15);
    ck_assert_double_eq_tol(free_at, 28.086e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_chunk(f, &free_at, 30e-3), 30e-3, 1e-15);
    ck_assert_double_eq_tol(free_at, 30.030e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_take(f, &free_at, 1.0, 4), 1.007014, 1e-15);
    ck_assert_double_eq_tol(free_at, 1.007014, 1e-15);
}
END_TEST

/* SGLang's row has no serial figure (0): a pure delay, recv(4) = 2.636 ms + 4 x 0.08 us = 2.63632 ms after each
 * send, however many at once, a chunk at its step's end; the server's free time is not moved. No row (NULL): the
 * send itself. */
START_TEST(no_serial_figure_is_a_delay)
{
    const strata_serve_frontend *s = strata_serve_engine_frontend(strata_serve_engine_find("sglang-v0.5", NULL));
    double free_at = 0;
    for (int k = 0; k < 3; k++)
        ck_assert_double_eq_tol(strata_serve_frontend_take(s, &free_at, 0.5, 4), 0.5 + 2.63632e-3, 1e-15);
    ck_assert(!strata_serve_frontend_serial(s) && strata_serve_frontend_chunk(s, &free_at, 0.75) == 0.75);
    ck_assert(strata_serve_frontend_serial_row(s) == s && !strata_serve_frontend_serial_row(NULL));
    ck_assert(free_at == 0);
    ck_assert(strata_serve_frontend_take(NULL, &free_at, 0.25, 4) == 0.25 && free_at == 0);
}
END_TEST

/* --serial-api-server where it would change nothing is refused (exit 2, the engine and why named), as
 * --fp8-linear-rocm is: SGLang's front end has no serial figure, --offline runs no API server, TensorRT-LLM's
 * engine row prices no front end. With vLLM V1's row (no --engine) the option is taken. */
START_TEST(serial_server_refused_where_it_changes_nothing)
{
    const char *hw = STRATA_SOURCE_DIR "/configs/hw/h100.ini";
    const struct {
        const char *engine, *offline, *why;
    } bad[] = {{"sglang-v0.5", NULL, "no serial figure"}, {NULL, "--offline", "--offline runs no API server"},
               {"trtllm", NULL, "prices no front end"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strata_cli_result r = bad[i].engine ? strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson",
                                                              "n=1", "--serial-api-server", "--engine", bad[i].engine,
                                                              bad[i].offline, NULL)
                                            : strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson",
                                                              "n=1", "--serial-api-server", bad[i].offline, NULL);
        const char *engine = bad[i].engine ? bad[i].engine : "vllm-v1 (no --engine)";
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, "--serial-api-server") && strstr(r.err, engine) && strstr(r.err, bad[i].why),
                      "%s", r.err);
        strata_cli_result_clear(&r);
    }
    strata_cli_result ok = strata_test_cli("serve", "--hw", hw, "--model", "llama-3-8b", "--poisson", "n=1", "-q",
                                           "--serial-api-server", NULL);
    ck_assert_msg(ok.status == 0, "%s", ok.err);
    strata_cli_result_clear(&ok);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_frontend_queue");
    TCase *tc = tcase_create("serve_frontend_queue");
    tcase_add_test(tc, burst_through_a_serial_server);
    tcase_add_test(tc, no_serial_figure_is_a_delay);
    tcase_add_test(tc, serial_server_refused_where_it_changes_nothing);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
