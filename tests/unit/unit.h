/*
 * unit.h: what every cmocka test here includes, and small helpers.
 */
#ifndef CORDON_UNIT_H
#define CORDON_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* Asserts that haystack holds needle, printing both when it does not. */
#define assert_contains(haystack, needle) do {				\
	const char *h_ = (haystack), *n_ = (needle);			\
	if (h_ == NULL || strstr(h_, n_) == NULL)			\
		fail_msg("\"%s\" does not contain \"%s\"",		\
		    h_ ? h_ : "(null)", n_);				\
} while (0)

#endif
