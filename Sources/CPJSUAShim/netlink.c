/*
 * Linux network changes, as the kernel reports them: a NETLINK_ROUTE socket and a reader
 * that counts the messages that can move SIP traffic. Linux only (the header declares
 * these there); Apple platforms watch the network with Network.framework instead.
 */
#include "CPJSUAShim.h"

#if defined(__linux__)
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <sys/socket.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* A NETLINK_ROUTE socket subscribed to link, address and route changes (IPv4 and IPv6).
 * Returns the descriptor, or -errno when the system refuses one (a sandbox). */
int cpj_netlink_route_open(void) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
    if (fd < 0) return -errno;
    struct sockaddr_nl addr;
    memset(&addr, 0, sizeof addr);
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

/* Waits up to timeout_ms for messages and reads what is there. Returns how many of them are
 * changes that can move SIP traffic (0 when none or on a timeout), or -errno: a link going
 * up or down, a global address added or removed, a route of the main table other than the
 * kernel's own; never the loopback interface. A kernel that dropped messages (ENOBUFS) counts as one change. */
int cpj_netlink_route_read(int fd, int timeout_ms) {
    struct pollfd pfd = { fd, POLLIN, 0 };
    int ready = poll(&pfd, 1, timeout_ms);
    if (ready < 0) return errno == EINTR ? 0 : -errno;
    if (ready == 0) return 0;
    unsigned loopback = if_nametoindex("lo");
    int changes = 0;
    for (;;) {
        char buffer[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
        ssize_t length = recv(fd, buffer, sizeof buffer, 0);
        if (length < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) break;
            if (errno == ENOBUFS) { changes++; continue; }
            return -errno;
        }
        int remaining = (int)length;
        for (struct nlmsghdr *message = (struct nlmsghdr *)buffer; NLMSG_OK(message, remaining);
             message = NLMSG_NEXT(message, remaining)) {
            unsigned index = 0;
            switch (message->nlmsg_type) {
            case RTM_NEWADDR: case RTM_DELADDR: {
                struct ifaddrmsg *address = (struct ifaddrmsg *)NLMSG_DATA(message);
                /* Global addresses only (not IPv6 link-local), and a new one once it is
                 * usable: its duplicate-address detection over, not while tentative. */
                if (address->ifa_scope != RT_SCOPE_UNIVERSE) continue;
                if (message->nlmsg_type == RTM_NEWADDR && (address->ifa_flags & IFA_F_TENTATIVE)) continue;
                index = address->ifa_index; break;
            }
            case RTM_NEWLINK: case RTM_DELLINK:
                index = (unsigned)((struct ifinfomsg *)NLMSG_DATA(message))->ifi_index; break;
            case RTM_NEWROUTE: case RTM_DELROUTE: {
                struct rtmsg *route = (struct rtmsg *)NLMSG_DATA(message);
                /* Routes of the main table that the kernel did not derive from an address
                 * (a prefix route, fe80::/64): a default route moved, a route added. */
                if (route->rtm_table != RT_TABLE_MAIN || route->rtm_protocol == RTPROT_KERNEL) continue;
                index = 0; break;
            }
            default: continue;
            }
            if (index != 0 && index == loopback) continue;
            changes++;
        }
    }
    return changes;
}
#endif
