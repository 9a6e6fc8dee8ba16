/*
 * Threads and timers: registering the engine's own thread with pjlib, and scheduling a
 * callback on pjsua's timer heap, in forms Swift can call.
 */
#include "CPJSUAShim.h"

/* pj_thread_desc is an array typedef, awkward to allocate from Swift: its size in bytes. */
pj_size_t cpj_thread_desc_size(void) { return sizeof(pj_thread_desc); }

/* pj_thread_register over a descriptor Swift allocated as raw memory of that size. */
pj_status_t cpj_thread_register(const char *name, void *desc, pj_thread_t **thread) {
    return pj_thread_register(name, (long *)desc, thread);
}

/* pjsua_schedule_timer2 is a macro when PJ_TIMER_DEBUG is set; this is callable either way. */
pj_status_t cpj_schedule_timer(void (*cb)(void *user_data), void *user_data, unsigned msec_delay) {
    return pjsua_schedule_timer2(cb, user_data, msec_delay);
}
