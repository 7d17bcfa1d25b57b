/*
 * hardening_rows.c: the hardening passes' suite (hardening_rows.h).
 */
#include "hardening_rows.h"

int strata_hardening_main(const char *pass, const TTest *const *tests)
{
    char *suite_name = g_strdup_printf("hardening_%s", pass), *case_name = g_strdup_printf("%s_pass", pass);
    Suite *s = suite_create(suite_name);
    TCase *tc = tcase_create(case_name);
    tcase_set_timeout(tc, 300);
    for (const TTest *const *t = tests; *t; t++)
        tcase_add_test(tc, *t);
    suite_add_tcase(s, tc);
    int status = strata_test_main(s);
    g_free(case_name);
    g_free(suite_name);
    return status;
}
