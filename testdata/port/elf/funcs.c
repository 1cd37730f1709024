__attribute__((weak)) void _Z5scaleIfLi4EEvPT_PKS0_S0_i(void) {}
void gelu_tanh(void) {}
static void helper(void) {}
void notakernel_ptr(void) { helper(); }
