/*
 * interrupt.c: SIGINT, SIGTERM, SIGHUP and SIGQUIT as an orderly exit (contract in
 * interrupt.h).
 *
 * Design: the signals are blocked, then read from a signalfd by a watcher
 * thread that poll()s it together with an eventfd; strata_interrupt_stop()
 * writes the eventfd to end the watcher. Since the signals are blocked in
 * every thread, no asynchronous handler ever runs: the watcher is an
 * ordinary thread and may take locks, unlink files and format messages.
 *
 * Invariants:
 *  1. between start and stop, the four signals are blocked in the
 *     thread that called start and reach the process only through the
 *     signalfd; one that was ignored at start is read and dropped, and
 *     is ignored again (SIG_IGN) from stop on;
 *  2. the watcher reads `doing` only under `lock`; the command writes it
 *     only under `lock`;
 *  3. the process ends from the watcher only after the output set was
 *     discarded and its children ended (SIGTERM, waited for), so no
 *     temporary outlives an interrupt, its children's included;
 *  4. strata_interrupt_start() returns only once the watcher runs its own
 *     loop (`ready`, under `lock`): from then on it holds no lock but in
 *     interrupted(), so a fork() by the command (validate/published.c runs
 *     each case in a forked child) never copies a lock that a half-started
 *     thread held, in GLib's or the C library's thread set-up.
 */
#include "core/interrupt.h"
#include "core/error.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

struct strata_interrupt {
    char *cmd;
    strata_outfile_set *outs;
    GMutex lock;
    GCond started;
    bool ready;
    char *doing;
    sigset_t watched;
    sigset_t ignored; /* of watched, those ignored when strata started */
    sigset_t old_mask;
    int sig_fd, stop_fd;
    GThread *thread;
};

/* Both signals are watched (blocked, read from the signalfd), even one
 * that was ignored at start: SimGrid installs its own handlers over SIG_IGN,
 * so leaving such a signal unblocked would let a background job's ignored
 * SIGINT end the run through SimGrid's handler. The watcher drops what
 * arrives of an ignored one, so ignored stays ignored. */
static void watched_signals(sigset_t *set, sigset_t *ignored)
{
    sigemptyset(set);
    sigemptyset(ignored);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
        struct sigaction now;
        if (sigaction(sigs[i], NULL, &now) == 0 && now.sa_handler == SIG_IGN)
            sigaddset(ignored, sigs[i]); /* ignored by whoever started us: keep it so */
        sigaddset(set, sigs[i]);
    }
}

/* The process' children, from every thread's /proc children list (Linux). */
static GArray *children_of_self(void)
{
    GArray *pids = g_array_new(FALSE, FALSE, sizeof(pid_t));
    GDir *tasks = g_dir_open("/proc/self/task", 0, NULL);
    for (const char *tid; tasks && (tid = g_dir_read_name(tasks)) != NULL;) {
        char *path = g_strdup_printf("/proc/self/task/%s/children", tid), *text = NULL;
        if (g_file_get_contents(path, &text, NULL, NULL))
            for (char *p = text, *end; *p; p = end) {
                long pid = strtol(p, &end, 10);
                if (end == p)
                    break;
                pid_t one = (pid_t)pid;
                g_array_append_val(pids, one);
            }
        g_free(text);
        g_free(path);
    }
    if (tasks)
        g_dir_close(tasks);
    return pids;
}

/* Ends the children (sweep points, published cases, a gen before a run)
 * before the process ends, so that none outlives it holding a temporary:
 * each gets SIGTERM (their own watcher removes their temporaries) and is
 * waited for, at most CHILD_GRACE_MS in all, then SIGKILL. */
#define CHILD_GRACE_MS 10000
static void end_children(void)
{
    GArray *pids = children_of_self();
    for (guint i = 0; i < pids->len; i++)
        kill(g_array_index(pids, pid_t, i), SIGTERM);
    for (guint i = 0, waited_ms = 0; i < pids->len; i++) {
        pid_t pid = g_array_index(pids, pid_t, i);
        for (;;) {
            pid_t r = waitpid(pid, NULL, WNOHANG);
            if (r != 0 && !(r < 0 && errno == EINTR))
                break; /* ended, or reaped already (ECHILD) */
            if (waited_ms >= CHILD_GRACE_MS) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                break;
            }
            g_usleep(10 * 1000);
            waited_ms += 10;
        }
    }
    g_array_free(pids, TRUE);
}

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "SIGQUIT";
    }
}

static void interrupted(strata_interrupt *intr, int sig)
{
    g_mutex_lock(&intr->lock);
    strata_outfile_set_discard(intr->outs);
    end_children();
    char msg[1024];
    /* on a terminal, the progress line (ended by no newline) is erased
     * first, so that the message stands on its own line */
    int n = g_snprintf(msg, sizeof msg, "%sstrata %s: interrupted by %s while %s; no output was written\n",
                       isatty(STDERR_FILENO) ? "\r\033[K" : "", intr->cmd, signal_name(sig), intr->doing);
    if (n > 0 && write(STDERR_FILENO, msg, MIN((size_t)n, sizeof msg - 1)) < 0)
        n = 0;
    _exit(128 + sig);
}

static gpointer watcher_main(gpointer data)
{
    strata_interrupt *intr = data;
    struct pollfd fds[2] = {{.fd = intr->sig_fd, .events = POLLIN}, {.fd = intr->stop_fd, .events = POLLIN}};
    g_mutex_lock(&intr->lock);
    intr->ready = true;
    g_cond_signal(&intr->started);
    g_mutex_unlock(&intr->lock);
    for (;;) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return NULL;
        }
        if (fds[1].revents)
            return NULL;
        struct signalfd_siginfo info;
        if (fds[0].revents && read(intr->sig_fd, &info, sizeof info) == (ssize_t)sizeof info &&
            !sigismember(&intr->ignored, (int)info.ssi_signo))
            interrupted(intr, (int)info.ssi_signo);
    }
}

/* SIGPIPE's handler: nothing, so that a write to a pipe whose reader has
 * gone fails with EPIPE where the default action killed the process
 * (`strata run --json - --timeline t.json | head -c 10`: exit 141 with
 * .t.json.XXXXXX and its lock left behind). */
static void pipe_closed(int sig) { (void)sig; }

/* SIGPIPE handled (pipe_closed) from here to the exit, unless it is ignored
 * or handled already: an output on a closed pipe then fails its commit
 * ("cannot write standard output: Broken pipe", exit 2, the other outputs'
 * temporaries removed), and what a command prints for the eye on a closed
 * pipe is dropped, its files still written. A handler, not SIG_IGN: exec
 * resets it to the default, so a program strata starts (capture's, the
 * report's Python) gets SIGPIPE as it would have. Never restored: stdio
 * flushes standard output at exit, after strata_interrupt_stop(). */
static void pipe_writes_fail(void)
{
    struct sigaction now;
    if (sigaction(SIGPIPE, NULL, &now) != 0 || now.sa_handler != SIG_DFL)
        return;
    struct sigaction sa = {.sa_handler = pipe_closed, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGPIPE, &sa, NULL);
}

strata_interrupt *strata_interrupt_start(const char *cmd, strata_outfile_set *outs)
{
    pipe_writes_fail();
    strata_interrupt *intr = g_new0(strata_interrupt, 1);
    intr->cmd = g_strdup(cmd);
    intr->outs = outs;
    intr->doing = g_strdup("running");
    g_mutex_init(&intr->lock);
    g_cond_init(&intr->started);
    watched_signals(&intr->watched, &intr->ignored);
    pthread_sigmask(SIG_BLOCK, &intr->watched, &intr->old_mask);
    intr->sig_fd = signalfd(-1, &intr->watched, SFD_CLOEXEC);
    intr->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (intr->sig_fd < 0 || intr->stop_fd < 0) { /* no watcher: the signals act as before */
        pthread_sigmask(SIG_SETMASK, &intr->old_mask, NULL);
        return intr;
    }
    intr->thread = g_thread_new("strata-interrupt", watcher_main, intr);
    g_mutex_lock(&intr->lock);
    while (!intr->ready)
        g_cond_wait(&intr->started, &intr->lock);
    g_mutex_unlock(&intr->lock);
    return intr;
}

void strata_interrupt_set_doing(strata_interrupt *intr, const char *what)
{
    g_mutex_lock(&intr->lock);
    g_free(intr->doing);
    intr->doing = g_strdup(what);
    g_mutex_unlock(&intr->lock);
}

void strata_interrupt_stop(strata_interrupt *intr)
{
    if (intr == NULL)
        return;
    if (intr->thread) {
        uint64_t one = 1;
        if (write(intr->stop_fd, &one, sizeof one) == (ssize_t)sizeof one)
            g_thread_join(intr->thread);
        else
            g_thread_unref(intr->thread);
        /* ignored stays ignored after the watcher, too: SimGrid's handler,
         * installed over SIG_IGN, would otherwise take one that comes
         * between here and the exit (exit 1) */
        for (int sig = 1; sig < NSIG; sig++)
            if (sigismember(&intr->ignored, sig) == 1)
                signal(sig, SIG_IGN);
        pthread_sigmask(SIG_SETMASK, &intr->old_mask, NULL);
    }
    if (intr->sig_fd >= 0)
        close(intr->sig_fd);
    if (intr->stop_fd >= 0)
        close(intr->stop_fd);
    g_mutex_clear(&intr->lock);
    g_cond_clear(&intr->started);
    g_free(intr->doing);
    g_free(intr->cmd);
    g_free(intr);
}

void strata_child_signals_read(strata_child_signals *s)
{
    const int sigs[] = {SIGINT, SIGHUP, SIGQUIT};
    size_t n = 0;
    for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++) {
        struct sigaction now;
        if (sigaction(sigs[i], NULL, &now) == 0 && now.sa_handler == SIG_IGN)
            s->ignored[n++] = sigs[i];
    }
    while (n < G_N_ELEMENTS(s->ignored))
        s->ignored[n++] = 0;
}

void strata_interrupt_child_setup(gpointer signals)
{
    const strata_child_signals *keep = signals;
    for (size_t i = 0; keep && i < G_N_ELEMENTS(keep->ignored) && keep->ignored[i]; i++)
        signal(keep->ignored[i], SIG_IGN); /* async-signal-safe; after GLib's reset to the default */
    pid_t parent = getppid();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) /* the parent died before prctl */
        _exit(128 + SIGTERM);
}

static bool write_all(int fd, const char *text)
{
    for (size_t n = strlen(text), done = 0; done < n;) {
        ssize_t w = write(fd, text + done, n - done);
        if (w < 0 && errno != EINTR)
            return false;
        done += w > 0 ? (size_t)w : 0;
    }
    return true;
}

char *strata_child_text(char *(*fn)(void *data), void *data, GError **err)
{
    int fds[2];
    if (pipe(fds) != 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "pipe: %s", g_strerror(errno));
        return NULL;
    }
    strata_child_signals keep; /* a signal the parent ignores (trap '' INT) stays ignored in the child */
    strata_child_signals_read(&keep);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        strata_interrupt_child_setup(&keep);
        char *text = fn(data);
        bool ok = write_all(fds[1], text);
        g_free(text);
        _exit(ok ? 0 : 1);
    }
    int fork_errno = errno;
    close(fds[1]);
    GString *text = g_string_new(NULL);
    char buf[512];
    for (ssize_t n; pid > 0 && ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR));)
        if (n > 0)
            g_string_append_len(text, buf, n);
    close(fds[0]);
    int status = 0;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (pid < 0) {
        g_set_error(err, STRATA_ERROR, STRATA_ERROR_IO, "fork: %s", g_strerror(fork_errno));
        g_string_free(text, TRUE);
        return NULL;
    }
    /* What a child wrote counts only when it exited 0: one killed midway
     * (a signal, SimGrid's abort) or whose write failed left a part, which
     * was read as its answer ("ok 1.2" of "ok 1.25e-05"). */
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (WIFSIGNALED(status))
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "the child process was killed by signal %d (%s)",
                        WTERMSIG(status), g_strsignal(WTERMSIG(status)));
        else
            g_set_error(err, STRATA_ERROR, STRATA_ERROR_INTERNAL, "the child process exited with status %d",
                        WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        g_string_free(text, TRUE);
        return NULL;
    }
    return g_string_free(text, FALSE);
}
