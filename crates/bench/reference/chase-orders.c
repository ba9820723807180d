// Pointer-chase latency at the given sizes in four orders, to tell apart
// what an access order does from what the machine does (docs/bench.md,
// "LMBench side by side"):
//   gcc -O2 -o chase-orders crates/bench/reference/chase-orders.c
//   ./chase-orders 1 1.5 8 12 16 32        (sizes in MiB, up to 64)
// A  every 128-byte line of a contiguous buffer, in one random order
//    (lever bench's lat_mem_rd);
// B  the lines of pages chosen at random from a 64 MiB buffer, a different
//    page on every load, the pages in one fixed cycle (the order LMBench's
//    lat_mem_rd -t builds);
// C  the pages of B, every line in one random order;
// D  a contiguous buffer in B's page-cyclic order.
// Each figure is the best of five timings of at least 2 million loads, ns.
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#define LINE 128
#define PAGE 4096
static uint64_t x = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void){ x^=x<<13; x^=x>>7; x^=x<<17; return x; }
static void shuffle(size_t *a, size_t n){ for(size_t i=n-1;i>0;i--){ size_t j=rnd()%(i+1); size_t t=a[i];a[i]=a[j];a[j]=t; } }
static double now(void){ struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9; }
static double run(char **start, size_t n){
  char **p=start; size_t loads = n; if (loads < 2000000) loads = 2000000;
  for(size_t i=0;i<n;i++) p=(char**)*p;
  double best=1e9;
  for(int r=0;r<5;r++){ double t0=now(); for(size_t i=0;i<loads;i++) p=(char**)*p; double t=(now()-t0)/loads*1e9; if(t<best) best=t; }
  if(p==0) printf("x");
  return best;
}
int main(int ac, char **av){
  size_t max = 64u<<20; char *buf = aligned_alloc(PAGE, max);
  for(size_t i=0;i<max;i+=PAGE) buf[i]=1;
  size_t nmp = max/PAGE; size_t *pages = malloc(nmp*sizeof *pages);
  for(size_t i=0;i<nmp;i++) pages[i]=i*PAGE;
  for(int a=1;a<ac;a++){
    size_t len = (size_t)(atof(av[a])*1024*1024);
    size_t lines = len/LINE, npages = len/PAGE, lpp = PAGE/LINE;
    // A: contiguous, global shuffle
    size_t *ord = malloc(lines*sizeof *ord); for(size_t i=0;i<lines;i++) ord[i]=i*LINE; shuffle(ord,lines);
    for(size_t i=0;i<lines;i++) *(char**)(buf+ord[i]) = buf+ord[(i+1)%lines];
    double A = run((char**)(buf+ord[0]), lines);
    // B: random pages, page-cyclic, fixed line order per round shifted
    shuffle(pages,nmp);
    size_t *w = malloc(lpp*sizeof *w); for(size_t i=0;i<lpp;i++) w[i]=i*LINE; shuffle(w,lpp);
    for(size_t r=0;r<lpp;r++) for(size_t i=0;i<npages;i++){
      size_t cur = pages[i]+w[(i+r)%lpp];
      size_t nx = (i+1<npages) ? pages[i+1]+w[(i+1+r)%lpp] : pages[0]+w[(r+1)%lpp];
      *(char**)(buf+cur)=buf+nx; }
    double B = run((char**)(buf+pages[0]+w[0]), lines);
    // C: random pages (as B), global line shuffle over them
    size_t *o2 = malloc(lines*sizeof *o2); for(size_t i=0;i<lines;i++) o2[i]=pages[i/lpp]+(i%lpp)*LINE; shuffle(o2,lines);
    for(size_t i=0;i<lines;i++) *(char**)(buf+o2[i]) = buf+o2[(i+1)%lines];
    double C = run((char**)(buf+o2[0]), lines);
    // D: contiguous, page-cyclic (pages in order of a shuffle of the first npages)
    size_t *cp = malloc(npages*sizeof *cp); for(size_t i=0;i<npages;i++) cp[i]=i*PAGE; shuffle(cp,npages);
    for(size_t r=0;r<lpp;r++) for(size_t i=0;i<npages;i++){
      size_t cur = cp[i]+w[(i+r)%lpp];
      size_t nx = (i+1<npages) ? cp[i+1]+w[(i+1+r)%lpp] : cp[0]+w[(r+1)%lpp];
      *(char**)(buf+cur)=buf+nx; }
    double D = run((char**)(buf+cp[0]+w[0]), lines);
    printf("%6.2f MiB  A contig+global %7.2f  B scattered+page-cyclic %7.2f  C scattered+global %7.2f  D contig+page-cyclic %7.2f ns\n", atof(av[a]), A, B, C, D);
    free(ord); free(o2); free(cp); free(w);
  }
  return 0;
}
