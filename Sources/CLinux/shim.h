// Linux interfaces Glibc's Swift module leaves out: timerfd, used to hear at once when the wall clock is set.
#include <sys/timerfd.h>
#include <poll.h>
