/*
 * clock.c: time gone by on the monotonic clock, in milliseconds, for
 * durations and bounded waits (not the time of day).
 */
#include <time.h>

#include "lib/util.h"

/* Milliseconds from start (CLOCK_MONOTONIC) to now. */
long long
clock_ms_since(const struct timespec *start)
{
	struct timespec	 now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long long)(now.tv_sec - start->tv_sec) * 1000 +
	    (now.tv_nsec - start->tv_nsec) / 1000000;
}
