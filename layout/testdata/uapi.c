/* build: gcc -g -O0 -o OUT uapi.c
 *
 * Linux UAPI structs: many bitfields (perf_event_attr), unions, anonymous
 * members and flexible arrays, printed as pahole 1.24 prints them
 * (TestPahole).
 */
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/input.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/btf.h>
#include <linux/fs.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <linux/usbdevice_fs.h>

struct perf_event_attr v1;
struct perf_event_mmap_page v2;
union bpf_attr v3;
struct bpf_insn v4;
struct bpf_prog_info v5;
struct bpf_map_info v6;
struct tpacket_hdr v7;
struct tpacket3_hdr v8;
struct tpacket_req3 v9;
struct nlmsghdr v10;
struct ifinfomsg v11;
struct rtmsg v12;
struct input_event v13;
struct input_absinfo v14;
struct ethtool_cmd v15;
struct ethtool_link_settings v16;
struct btf_header v17;
struct btf_type v18;
struct btf_enum v19;
struct file_clone_range v20;
struct sock_filter v21;
struct io_uring_sqe v22;
struct io_uring_cqe v23;
struct io_uring_params v24;
struct seccomp_data v25;
struct usbdevfs_urb v26;
struct bpf_sock v27;
struct __sk_buff v28;
struct bpf_sock_ops v29;
struct perf_branch_entry v30;
union perf_mem_data_src v31;
struct ethtool_ringparam v32;
struct rtnl_link_stats64 v33;

int main(void) { return 0; }
