// zlib, which every platform Runway runs on ships (Apple's SDKs, Debian's zlib1g-dev).
#include <zlib.h>
