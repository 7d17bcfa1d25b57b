/*
 * reach.h: STRATA_TEST_REACH_FN, a shell function for strata_test_sh_in
 * scripts that wait for a state instead of sleeping a fixed time.
 *
 * `reach COND` returns once the shell condition COND holds, polled every
 * 20 ms; after 2000 polls (40 s and more, where the state is reached in a
 * fraction of a second) it prints "never reached: COND" and fails, so that
 * a script on a heavily loaded machine waits for the state it needs
 * instead of racing a fixed sleep, and one that never gets there says so.
 */
#ifndef STRATA_TEST_REACH_H
#define STRATA_TEST_REACH_H

#define STRATA_TEST_REACH_FN                                                                                      \
    "reach() { n=0; until eval \"$1\"; do n=$((n+1)); "                                                          \
    "if [ $n -ge 2000 ]; then echo \"never reached: $1\"; return 1; fi; sleep 0.02; done; }; "

#endif
