/* A fixture of scripts/check-sizes.py (the ctest sizes_offenders_named):
 * one function of 8 lines (its signature, on two lines, counted), a table and a struct that are none. */
static const char *const names[] = {
    "a", "{", NULL};

struct pair {
    int a, b;
};

static int
seven(int x)
{
    if (x) { /* } */
        return 1;
    }
    return 0;
}
