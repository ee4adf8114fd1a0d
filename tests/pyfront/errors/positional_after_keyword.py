copy = make_async_copy(src_ref=x_ref, o_ref, sem)
