/*
 * test_serve_frontend_queue.c: the API server as a serial server
 * (serve_frontend_queue.h) against values derived by hand.
 */
#include "serve/serve_engine.h"
#include "serve/serve_frontend.h"
#include "serve/serve_frontend_queue.h"
#include "testutil.h"

/* vLLM V1's row: serial_s = 130.74 s / 10000 requests (PR #17546) = 13.074 ms; recv(4) = 5.07984 ms
 * (test_serve_frontend.c). A burst of 4 requests of 4 tokens sent at 0: the k-th is taken at k x 13.074 ms and
 * reaches the scheduler 5.07984 ms later: 5.07984, 18.15384, 31.22784, 44.30184 ms; the server is free at
 * 4 x 13.074 = 52.296 ms. A fifth sent at 1 s finds it free: 1.00507984 s, free at 1.013074 s. So a burst of N
 * is received over N x 13.074 ms: 76.49 requests/s at most, whatever the GPU. */
START_TEST(burst_through_a_serial_server)
{
    const strata_serve_frontend *f = strata_serve_engine_frontend(NULL);
    ck_assert_double_eq_tol(f->serial_s, 13.074e-3, 1e-15);
    double free_at = 0;
    const double want[4] = {5.07984e-3, 18.15384e-3, 31.22784e-3, 44.30184e-3};
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq_tol(strata_serve_frontend_take(f, &free_at, 0, 4), want[k], 1e-15);
    ck_assert_double_eq_tol(free_at, 52.296e-3, 1e-15);
    ck_assert_double_eq_tol(strata_serve_frontend_take(f, &free_at, 1.0, 4), 1.00507984, 1e-15);
    ck_assert_double_eq_tol(free_at, 1.013074, 1e-15);
}
END_TEST

/* SGLang's row has no serial figure (0): a pure delay, recv(4) = 2.636 ms + 4 x 0.08 us = 2.63632 ms after each
 * send, however many at once; the server's free time is not moved. No row (NULL): the send itself. */
START_TEST(no_serial_figure_is_a_delay)
{
    const strata_serve_frontend *s = strata_serve_engine_frontend(strata_serve_engine_find("sglang-v0.5", NULL));
    double free_at = 0;
    for (int k = 0; k < 3; k++)
        ck_assert_double_eq_tol(strata_serve_frontend_take(s, &free_at, 0.5, 4), 0.5 + 2.63632e-3, 1e-15);
    ck_assert(free_at == 0);
    ck_assert(strata_serve_frontend_take(NULL, &free_at, 0.25, 4) == 0.25 && free_at == 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("serve_frontend_queue");
    TCase *tc = tcase_create("serve_frontend_queue");
    tcase_add_test(tc, burst_through_a_serial_server);
    tcase_add_test(tc, no_serial_figure_is_a_delay);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
