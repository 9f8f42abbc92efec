/* banner.h -- the start-up logo or "Running mode=" line (see banner.c). */
#ifndef CAIRN_BANNER_H
#define CAIRN_BANNER_H

/* Log the banner; call once the listeners are open. */
void bannerShow(void);

#endif
