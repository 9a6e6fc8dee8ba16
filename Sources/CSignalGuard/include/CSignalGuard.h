/*
 * SIGINT and SIGTERM for the swiftpjsua command-line tool, caught from before main.
 *
 * A signal that arrives while the process is still starting (the dynamic linker done,
 * Foundation's initializers running, main not reached) would otherwise kill it with the
 * default action, or be lost if it came between ignoring the signal and a dispatch source
 * taking it over. The handler is installed from the executable's .preinit_array, which the
 * dynamic linker runs before any library's initializer, and only records the signal and
 * writes its number to a pipe the tool then reads.
 */
#ifndef SWIFTPJSUA_CSIGNALGUARD_H
#define SWIFTPJSUA_CSIGNALGUARD_H

/* The read end of the pipe each caught signal writes its number to (non-blocking), or -1. */
int csg_signal_fd(void);

/* The first signal caught (SIGINT or SIGTERM), or 0. */
int csg_first_signal(void);

#endif
