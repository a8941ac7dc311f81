/* Reading NumPy .npy files into tensors (inputs for tools such as weft-prof).
 *
 * Supported: format versions 1.0 and 2.0, C order, little-endian (or
 * byte-order-free) dtypes of every weft dtype: '|b1' (bool), '|i1',
 * '<i2', '<i4', '<i8' (int8..int64), '|u1', '<u2', '<u4', '<u8'
 * (uint8..uint64), '<f2' (float16), '<f4', '<f8' (float32, float64), '<c8'
 * (complex64) and '<c16' (complex128: pairs of little-endian floats, real
 * part first); '<b1', '<i1' and '<u1' are also read. Any rank up to
 * WEFT_MAX_NDIM. Anything else
 * is refused with a message saying what: big-endian or other dtypes, Fortran
 * order, other versions, a malformed header, a truncated file.
 *
 * Thread: any (no shared state). */
#ifndef WEFT_NPY_H
#define WEFT_NPY_H

#include <stddef.h>

#include "weft/export.h"
#include "weft/status.h"
#include "weft/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Loads the array in path as a new C-contiguous tensor. msg (msg_cap bytes,
 * may be NULL with 0) receives the reason of a failure, naming the file.
 * Ownership: borrows path and msg; *out is new, free with weft_tensor_release.
 * The header's length and the data's size are checked against the file's
 * length before memory is allocated for either.
 * Errors: WEFT_EINVAL (NULL path/out), WEFT_EIO (cannot open, read or seek
 *   (a path that is not a regular file); the file holds fewer bytes than its
 *   header length or its shape declares), WEFT_EPARSE (not an .npy file,
 *   malformed header), WEFT_ENOTIMPL (a version other than 1.0/2.0, Fortran
 *   order, big-endian or unsupported dtype, more than WEFT_MAX_NDIM
 *   dimensions), WEFT_EOVERFLOW (the shape's byte size does not fit in int64),
 *   WEFT_ENOMEM. */
WEFT_API weft_status_t weft_npy_load(const char *path, weft_tensor_t **out, char *msg,
                                     size_t msg_cap);

/* Writes t as a NumPy .npy file (version 1.0, C order, little-endian) that
 * numpy.load reads back with the same dtype, shape and values; a
 * non-contiguous t is written in C order. msg as weft_npy_load.
 * Ownership: borrows.  Thread: any (t not written meanwhile).
 * Errors: WEFT_EINVAL (NULL path/t), WEFT_ETYPE (a dtype with no descr
 *   above, "... is not supported by the npy writer": none today), WEFT_EIO
 *   (cannot create or write the file, named), WEFT_ENOMEM. */
WEFT_API weft_status_t weft_npy_save(const char *path, weft_tensor_t *t, char *msg,
                                     size_t msg_cap);

#ifdef __cplusplus
}
#endif
#endif /* WEFT_NPY_H */
