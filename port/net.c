/* net.c - TCP sockets for `pith serve`: listen, accept, non-blocking
 * reads and writes, poll, and the wall clock. Nothing here allocates:
 * addresses are numeric (no resolver), buffers belong to the caller. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "port.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* SIGPIPE is ignored by main() anyway */
#endif

static int set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL, 0);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
    return 0;
}

int port_net_listen(const char *host, int port, int backlog, int *bound_port, char *err, size_t err_len)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    memset(&ss, 0, sizeof ss);
    if (port < 0 || port > 65535) {
        snprintf(err, err_len, "--port: %d is not a TCP port", port);
        return -1;
    }
    if (strcmp(host, "localhost") == 0) host = "127.0.0.1";
    struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        sl = sizeof *a4;
    } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        sl = sizeof *a6;
    } else {
        snprintf(err, err_len, "--host: '%s' is not a numeric IPv4 or IPv6 address (e.g. 127.0.0.1, 0.0.0.0, ::)", host);
        return -1;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM, 0);
    if (fd < 0) {
        snprintf(err, err_len, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, sl) != 0) {
        snprintf(err, err_len, "%s port %d: cannot listen: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    if (listen(fd, backlog) != 0 || set_nonblocking(fd) != 0) {
        snprintf(err, err_len, "%s port %d: cannot listen: %s", host, port, strerror(errno));
        close(fd);
        return -1;
    }
    struct sockaddr_storage got;
    socklen_t gl = sizeof got;
    *bound_port = port;
    if (getsockname(fd, (struct sockaddr *)&got, &gl) == 0)
        *bound_port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
                                                      : ((struct sockaddr_in *)&got)->sin_port);
    return fd;
}

int port_net_accept(int listen_fd)
{
    for (;;) {
        int fd = accept(listen_fd, NULL, NULL);
        if (fd < 0) {
            if (errno == EINTR) continue;
            /* EAGAIN: nobody waiting; ECONNABORTED and descriptor
             * exhaustion (EMFILE): nothing to accept now either. */
            return -1;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (set_nonblocking(fd) != 0) {
            close(fd);
            continue;
        }
        return fd;
    }
}

long port_net_recv(int fd, void *buf, size_t cap)
{
    for (;;) {
        ssize_t n = recv(fd, buf, cap, 0);
        if (n >= 0) return (long)n;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
        return -2;
    }
}

long port_net_send(int fd, const void *buf, size_t n)
{
    for (;;) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w >= 0) return (long)w;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
        return -2;
    }
}

void port_net_shutdown_write(int fd)
{
    shutdown(fd, SHUT_WR);
}

void port_net_close(int fd)
{
    if (fd >= 0) close(fd);
}

int port_net_poll(PortPoll *p, int n, int timeout_ms)
{
    struct pollfd fds[PORT_NET_MAX_POLL];
    if (n < 0 || n > PORT_NET_MAX_POLL) return -1;
    for (int i = 0; i < n; i++) {
        fds[i].fd = p[i].fd;
        fds[i].events = (short)(((p[i].want & PORT_NET_READ) ? POLLIN : 0) | ((p[i].want & PORT_NET_WRITE) ? POLLOUT : 0));
        fds[i].revents = 0;
    }
    int r = poll(fds, (nfds_t)n, timeout_ms);
    if (r < 0) return errno == EINTR ? 0 : -1;
    for (int i = 0; i < n; i++) {
        int got = 0;
        if (fds[i].revents & POLLIN) got |= PORT_NET_READ;
        if (fds[i].revents & POLLOUT) got |= PORT_NET_WRITE;
        if (fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) got |= PORT_NET_HUP;
        p[i].got = got;
    }
    return r;
}

int64_t port_wall_seconds(void)
{
    return (int64_t)time(NULL);
}

int64_t port_template_seconds(void)
{
    const char *v = getenv("SOURCE_DATE_EPOCH");
    if (v && *v) {
        char *end;
        errno = 0;
        long long t = strtoll(v, &end, 10);
        if (!errno && *end == '\0' && t >= 0) return (int64_t)t;
    }
    return port_wall_seconds();
}
