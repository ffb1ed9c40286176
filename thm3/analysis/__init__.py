"""What is checked about a loop before and after synthesis: its inductive invariants, the
Bird check, the witness that no combine exists, the transport of structure, the attention
shape, and numerical stability."""
