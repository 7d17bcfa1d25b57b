/*
 * test_cli_help.c: the help lists everything that exists, read from the
 * tables themselves (not from a copy of their names here), so a command,
 * import format or workload added to its table and missing from the help
 * fails this test:
 *  - `strata --help` shows every command of strata_commands() with its
 *    summary, and after it every choice its choices() names;
 *  - `strata import --help` shows every import format with its summary;
 *  - `strata gen --list` shows every workload type with its summary;
 *  - an unknown command lists the known ones (exit 2).
 */
#include <string.h>
#include "cli/cli.h"
#include "testutil.h"
#include "workload/workload.h"

/* The text of `out` from the line starting with "  NAME " to the next command line. */
static char *command_block(const char *out, const char *name)
{
    char *head = g_strdup_printf("\n  %s ", name);
    const char *at = strstr(out, head);
    g_free(head);
    if (!at)
        return NULL;
    at++;
    const char *end = at + 1;
    /* the block ends at the next line that starts with two spaces and a letter */
    while ((end = strchr(end, '\n')) && !(end[1] == ' ' && end[2] == ' ' && g_ascii_isalpha(end[3])) &&
           end[1] != '\n')
        end++;
    return end ? g_strndup(at, (gsize)(end - at) + 1) : g_strdup(at); /* with its newline */
}

START_TEST(top_level_help_lists_every_command)
{
    strata_cli_result r = strata_test_cli("--help", NULL);
    ck_assert_int_eq(r.status, 0);
    int n = 0;
    for (const strata_command *c = strata_commands(); c->name; c++, n++) {
        char *block = command_block(r.out, c->name);
        ck_assert_msg(block, "strata --help has no line for '%s':\n%s", c->name, r.out);
        ck_assert_msg(strstr(block, c->summary), "'%s' line lacks its summary '%s'", c->name, c->summary);
        if (c->choices) {
            char *choices = c->choices();
            char **names = g_strsplit(choices, ", ", -1);
            ck_assert_int_gt(g_strv_length(names), 0);
            for (char **w = names; *w; w++) {
                /* a whole word of the block: followed by ',' or a newline */
                char *comma = g_strdup_printf(" %s,", *w), *last = g_strdup_printf(" %s\n", *w);
                ck_assert_msg(strstr(block, comma) || strstr(block, last), "'%s' lacks choice '%s':\n%s",
                              c->name, *w, block);
                g_free(comma);
                g_free(last);
            }
            g_strfreev(names);
            g_free(choices);
        }
        g_free(block);
    }
    /* the commands the README documents, so the table itself cannot lose one */
    ck_assert_int_ge(n, 11);
    strata_cli_result_clear(&r);
}
END_TEST

START_TEST(import_help_lists_every_format)
{
    strata_cli_result r = strata_test_cli("import", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    int n = 0;
    for (const strata_import_format *f = strata_import_formats(); f->name; f++, n++) {
        char *line = g_strdup_printf("  %-11s %s\n", f->name, f->summary);
        ck_assert_msg(strstr(r.out, line), "import --help lacks '%s':\n%s", line, r.out);
        g_free(line);
    }
    ck_assert_int_ge(n, 4); /* torch, minimalloc, xla, kineto at least */
    strata_cli_result_clear(&r);
    /* and the top-level help names each */
    r = strata_test_cli("--help", NULL);
    char *block = command_block(r.out, "import");
    for (const strata_import_format *f = strata_import_formats(); f->name; f++)
        ck_assert_msg(strstr(block, f->name), "top-level import line lacks %s", f->name);
    g_free(block);
    strata_cli_result_clear(&r);
}
END_TEST

START_TEST(gen_list_lists_every_workload)
{
    strata_cli_result r = strata_test_cli("gen", "--list", NULL);
    ck_assert_int_eq(r.status, 0);
    int n = 0;
    for (const strata_workload_type *const *t = strata_workload_types(); *t; t++, n++) {
        char *line = g_strdup_printf("%s: %s\n", (*t)->name, (*t)->summary);
        ck_assert_msg(strstr(r.out, line), "gen --list lacks '%s'", line);
        g_free(line);
    }
    ck_assert_int_ge(n, 5); /* scan-mlp, adam-mlp, matmul, transformer, collective at least */
    strata_cli_result_clear(&r);
}
END_TEST

START_TEST(unknown_command_lists_known)
{
    strata_cli_result r = strata_test_cli("frobnicate", NULL);
    ck_assert_int_eq(r.status, 2);
    for (const strata_command *c = strata_commands(); c->name; c++)
        ck_assert_msg(strstr(r.err, c->name), "unknown-command error lacks %s: %s", c->name, r.err);
    strata_cli_result_clear(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_help");
    TCase *tc = tcase_create("help");
    tcase_add_test(tc, top_level_help_lists_every_command);
    tcase_add_test(tc, import_help_lists_every_format);
    tcase_add_test(tc, gen_list_lists_every_workload);
    tcase_add_test(tc, unknown_command_lists_known);
    suite_add_tcase(s, tc);
    return strata_test_main(s);
}
