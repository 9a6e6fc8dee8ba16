#define _GNU_SOURCE
#include "CSignalGuard.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t first_signal = 0;
static int pipe_fds[2] = {-1, -1};

/* Async-signal-safe: a store and a write(2). */
static void on_signal(int number) {
    if (first_signal == 0) first_signal = number;
    if (pipe_fds[1] >= 0) {
        char byte = (char)number;
        ssize_t written = write(pipe_fds[1], &byte, 1);
        (void)written;
    }
}

static void install(void) {
    struct sigaction action;
    sigset_t set;
    int fds[2];
    if (pipe(fds) == 0) {
        fcntl(fds[0], F_SETFD, FD_CLOEXEC);
        fcntl(fds[1], F_SETFD, FD_CLOEXEC);
        fcntl(fds[0], F_SETFL, O_NONBLOCK);
        fcntl(fds[1], F_SETFL, O_NONBLOCK);
        pipe_fds[0] = fds[0];
        pipe_fds[1] = fds[1];
    }
    memset(&action, 0, sizeof(action));
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    /* A parent may have started us with them blocked: take any pending one now. */
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
}

#if defined(__linux__)
static void install_preinit(int argc, char **argv, char **envp) {
    (void)argc;
    (void)argv;
    (void)envp;
    install();
}
__attribute__((section(".preinit_array"), used))
static void (*const csg_preinit)(int, char **, char **) = install_preinit;
#else
__attribute__((constructor)) static void csg_constructor(void) { install(); }
#endif

int csg_signal_fd(void) { return pipe_fds[0]; }

int csg_first_signal(void) { return (int)first_signal; }
