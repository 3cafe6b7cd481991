/*
 * offline.h: cordon-offline's hand-over to cordon-main (offline.c).
 */
#ifndef CORDON_OFFLINE_H
#define CORDON_OFFLINE_H

void	offline_exec_main(void);

#endif
