// Linux interfaces Glibc's Swift module leaves out: timerfd, used to hear at once when the wall clock is set,
// memfd_create, which holds a hook's standard input, thread names, syncfs, malloc_trim and mallopt.
#include <sys/timerfd.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

/// memfd_create(2): an anonymous file in memory. A shim because glibc declares it only under _GNU_SOURCE and Swift
/// cannot call the variadic syscall(2).
static inline int CLinux_memfd_create(const char *name, unsigned int flags) {
    return (int)syscall(SYS_memfd_create, name, flags);
}

/// MFD_CLOEXEC, from <linux/memfd.h>.
static const unsigned int CLinux_MFD_CLOEXEC = 1U;

#include <sys/prctl.h>

/// Names the calling thread (15 bytes at most), as `top -H` and debuggers show it: prctl(2) is variadic.
static inline int CLinux_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/// syncfs(2): every file written on the file system holding `fd` made durable in one call. A shim because glibc
/// declares it only under _GNU_SOURCE.
static inline int CLinux_syncfs(int fd) {
    return (int)syscall(SYS_syncfs, fd);
}

#include <malloc.h>

/// malloc_trim(3): gives freed heap pages back to the system. <malloc.h> is not part of Glibc's Swift module.
static inline int CLinux_malloc_trim(size_t pad) {
    return malloc_trim(pad);
}

/// mallopt(3) with M_MMAP_THRESHOLD: blocks of at least `bytes` get pages of their own, returned when freed.
static inline int CLinux_set_mmap_threshold(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}
