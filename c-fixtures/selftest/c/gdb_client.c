/* The program LLVM's gdb OMPD plugin drives in ompd-conform's tests/gdb_plugin.rs: two nested
 * teams of four threads (the plugin asks a team for its threads 1 and 2, and the region for its
 * enclosing one), an explicit task in the inner one, and a stop inside that task. */
#include <omp.h>
#include <stdio.h>

/* The breakpoint: the task's thread stops here. */
void stop_here(int thread_num) { __asm__ volatile("" ::"r"(thread_num)); }

int main(void) {
  omp_set_max_active_levels(2);
#pragma omp parallel num_threads(4)
  {
#pragma omp parallel num_threads(4)
    {
#pragma omp single
      {
#pragma omp task
        { stop_here(omp_get_thread_num()); }
#pragma omp taskwait
      }
    }
  }
  printf("done\n");
  return 0;
}
