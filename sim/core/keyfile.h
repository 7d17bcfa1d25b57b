/*
 * keyfile.h: the one reader of strata's key files (hardware and experiment
 * .ini files): GLib key-file syntax with line numbers and strict checks.
 *
 *   # comment
 *   [group]
 *   key = value
 *
 * Loading reads the text through the bounded line reader (core/lines.h), so
 * an overlong line, a NUL byte or a file that never ends (a device, a FIFO)
 * fails at its line; a leading UTF-8 BOM is skipped. Each line is checked
 * as it is read: text that is not UTF-8, a malformed header or key line, a
 * key before the first group, a group or a key given twice, and a key line
 * last with no newline after it (a file cut inside it, core/lines.h
 * strata_lines_terminated; load_data's text too) are errors
 * "FILE:LINE: what was expected". Values are then held by a GKeyFile (so
 * escapes read as GLib reads them). With STRATA_KEYFILE_INLINE_COMMENTS a
 * '#' after a blank starts a comment inside a value ("16GiB  # per core").
 *
 * Overrides (strata_keyfile_override) replace or add a value after loading;
 * errors about an overridden key name the override instead of a line.
 * Messages quote user text through strata_quote() (at most a short excerpt).
 *
 * Invariants: every group and key read from the file has a line (>= 1);
 * groups and keys keep file order; a key is given once per group.
 */
#ifndef STRATA_KEYFILE_H
#define STRATA_KEYFILE_H

#include <glib.h>
#include <stdbool.h>

/* The largest key file read (bytes). */
#define STRATA_KEYFILE_MAX (16 * 1024 * 1024)

enum { STRATA_KEYFILE_INLINE_COMMENTS = 1 };

typedef struct strata_keyfile strata_keyfile;

/* what: the kind of file in I/O errors ("hardware file"); example_group:
 * the group named in "expected a group header such as [GROUP]". */
strata_keyfile *strata_keyfile_load(const char *path, const char *what, const char *example_group,
                                    unsigned flags, GError **err);
strata_keyfile *strata_keyfile_load_data(const char *data, const char *origin, const char *example_group,
                                         unsigned flags, GError **err);
void strata_keyfile_free(strata_keyfile *kf);

const char *strata_keyfile_origin(const strata_keyfile *kf);
char **strata_keyfile_groups(const strata_keyfile *kf, gsize *n);                  /* g_strfreev */
char **strata_keyfile_keys(const strata_keyfile *kf, const char *group, gsize *n); /* NULL: no group */
bool strata_keyfile_has_group(const strata_keyfile *kf, const char *group);
bool strata_keyfile_has_key(const strata_keyfile *kf, const char *group, const char *key);
/* The value as written, without surrounding blanks; NULL when absent. */
char *strata_keyfile_value(const strata_keyfile *kf, const char *group, const char *key);
/* The value with GLib's escapes (\s \n \t \r \\) resolved; the raw value
 * when that is not valid; NULL when absent. */
char *strata_keyfile_string(const strata_keyfile *kf, const char *group, const char *key);

/* Line of a group (key NULL) or key; 0 when it did not come from the file. */
guint strata_keyfile_line(const strata_keyfile *kf, const char *group, const char *key);
/* "FILE:LINE", "FILE (override NOTE)" for an overridden key, else the
 * group's line or "FILE" (g_free). */
char *strata_keyfile_where(const strata_keyfile *kf, const char *group, const char *key);

/* Sets group/key to value; note (e.g. "memory.hbm.capacity=16GiB") names
 * it in errors. The group must exist; overriding one key twice is an error. */
bool strata_keyfile_override(strata_keyfile *kf, const char *group, const char *key, const char *value,
                             const char *note, GError **err);

/* Notes that this file is the base of origin (hw's `base =`), the file
 * the command was given: where() names an override's key there. */
void strata_keyfile_note_derived_file(strata_keyfile *kf, const char *origin);
/* The file the command was given: the derived file, else this one. */
const char *strata_keyfile_given_origin(const strata_keyfile *kf);

/* Sets group/key to value as a file derived from this one states it
 * (hw's `base =`): note (the derived file's "FILE:LINE") names it in
 * errors as an override's does; but it is the file's value, not an
 * override (strata_keyfile_overridden: false), so an override may still
 * replace it. */
void strata_keyfile_set_derived(strata_keyfile *kf, const char *group, const char *key, const char *value,
                                const char *note);

/* Notes that group came from the derived file at note (its FILE:LINE), the
 * base having none: where() then names it there, not the base file without
 * a line. Call before the group's keys are set. */
void strata_keyfile_note_derived_group(strata_keyfile *kf, const char *group, const char *note);

/* Whether group/key was set by an override (not only read from the file). */
bool strata_keyfile_overridden(const strata_keyfile *kf, const char *group, const char *key);
/* Whether group/key was set by a file derived from this one (hw's `base =`). */
bool strata_keyfile_derived(const strata_keyfile *kf, const char *group, const char *key);
/* The layers that state a value, in the order they apply: the file, a file
 * derived from it (strata_keyfile_set_derived), an override. */
typedef enum {
    STRATA_KEYFILE_LAYER_FILE,
    STRATA_KEYFILE_LAYER_DERIVED,
    STRATA_KEYFILE_LAYER_OVERRIDE,
} strata_keyfile_layer;
/* The last layer that set group/key (FILE for a key no later layer set). */
strata_keyfile_layer strata_keyfile_layer_of(const strata_keyfile *kf, const char *group, const char *key);
/* group/key's value as the layers up to `layer` left it, without
 * surrounding blanks; NULL when it had none then (g_free). */
char *strata_keyfile_value_at(const strata_keyfile *kf, const char *group, const char *key, strata_keyfile_layer layer);
/* Every key of the group is one of known (NULL-terminated) or starts with
 * prefix (when not NULL) followed by something; else an error at the key's
 * line listing the known keys: "FILE:LINE: [GROUP] unknown key 'K' (known: ...)". */
bool strata_keyfile_check_keys(const strata_keyfile *kf, const char *group, const char *const *known,
                               const char *prefix, GError **err);

/* A key a kind of group declares: its name, whether the check below
 * refuses a group without it (false where the reader says so in its own
 * words, or needs it only with other keys), and its line of help (NULL
 * where the reader builds that line). strata's one way to declare the keys
 * of a key file: the hardware file's groups (hw/hw.c) and a collective
 * implementation's parameter block (hw/coll_impl.h), an experiment's
 * [experiment] and [output] (sweep/experiment.c). A model's parameters
 * (core/params.h) are another thing: typed values with defaults, set from
 * "k=v" text (a command line, a trace's option line, a hardware file's
 * allocator.KEY), which a model reads without seeing the text. */
typedef struct strata_key_def {
    const char *name;
    bool required;
    const char *description;
} strata_key_def;

/* strata_keyfile_check_keys with the names of defs (NULL-name terminated,
 * in their order), then every required key of defs is given, else
 * "WHERE: [GROUP] missing required key 'K'" (WHERE: the group's line). */
bool strata_keyfile_check_declared(const strata_keyfile *kf, const char *group, const strata_key_def *defs,
                                   const char *prefix, GError **err);

#endif
