/* hll.h -- HyperLogLog commands (t_hll.c): their start-up wiring. */
#ifndef CAIRN_TYPES_HLL_H
#define CAIRN_TYPES_HLL_H

/* Registers the HyperLogLog directives (CONFIG GET/SET/REWRITE, the config
 * file).  Called once from main.c, before the defaults are applied. */
void hllRegisterConfig(void);

#endif
