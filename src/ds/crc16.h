/* crc16.h -- CRC-16/XMODEM, as Redis Cluster's key hash slots use it
 * ("123456789" -> 0x31C3). */
#ifndef CAIRN_CRC16_H
#define CAIRN_CRC16_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-16/XMODEM of buf[0..len). */
uint16_t crc16(const void *buf, size_t len);

#endif
