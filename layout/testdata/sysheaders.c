/* build: gcc -g -O0 -o OUT sysheaders.c
 *
 * System headers' structs and unions in bulk: layouts the text printer
 * must print exactly as pahole 1.24 does (TestPaholeSystemHeaders). Each
 * type gets a variable so that it has a DWARF entry.
 */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <termios.h>
#include <time.h>
#include <ucontext.h>
#include <dirent.h>
#include <glob.h>
#include <regex.h>
#include <wchar.h>
#include <sys/uio.h>
#include <sys/statvfs.h>
#include <link.h>
#include <elf.h>
#include <stdlib.h>

struct sockaddr_in6 v_sin6;
struct sockaddr_storage v_ss;
struct msghdr v_msghdr;
struct cmsghdr v_cmsghdr;
struct ip v_ip;
struct iphdr v_iphdr;
struct tcphdr v_tcphdr;
struct tcp_info v_tcp_info;
pthread_mutex_t v_mutex;
pthread_attr_t v_attr;
pthread_cond_t v_cond;
pthread_rwlock_t v_rwlock;
struct sigaction v_sigaction;
siginfo_t v_siginfo;
stack_t v_stack;
FILE *v_file;
struct epoll_event v_epoll_event;
struct rusage v_rusage;
struct rlimit v_rlimit;
struct stat v_stat;
struct timeval v_timeval;
struct timespec v_timespec;
struct itimerval v_itimerval;
struct utsname v_utsname;
struct termios v_termios;
struct tm v_tm;
ucontext_t v_ucontext;
struct dirent v_dirent;
glob_t v_glob;
regex_t v_regex;
regmatch_t v_regmatch;
mbstate_t v_mbstate;
struct iovec v_iovec;
struct statvfs v_statvfs;
struct dl_phdr_info v_dl_phdr_info;
struct link_map v_link_map;
Elf64_Ehdr v_ehdr;
Elf64_Shdr v_shdr;
Elf64_Sym v_sym;
Elf64_Dyn v_dyn;
struct sigevent v_sigevent;
struct linger v_linger;
struct ip_mreqn v_ip_mreqn;
struct group_source_req v_gsr;
struct in6_pktinfo v_in6_pktinfo;
struct sched_param v_sched_param;
union sigval v_sigval;
fpos_t v_fpos;
div_t v_div;

int main(void) { return 0; }
