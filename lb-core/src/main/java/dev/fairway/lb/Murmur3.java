package dev.fairway.lb;

/**
 * MurmurHash3 x64/128 (Austin Appleby's public-domain design), returning the first 64 bits. Reads a
 * string's UTF-16 code units directly (little-endian, two bytes each), so hashing a key allocates
 * nothing. Fast and well mixed; not cryptographic, which a balancer does not need.
 */
final class Murmur3 {
  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;

  private Murmur3() {}

  static long hash64(CharSequence s) {
    return hash64(s, 0);
  }

  static long hash64(CharSequence s, long seed) {
    int chars = s.length();
    long h1 = seed;
    long h2 = seed;
    int i = 0;
    for (; i + 8 <= chars; i += 8) { // 8 chars = one 16-byte block
      long k1 = block(s, i);
      long k2 = block(s, i + 4);
      h1 ^= mixK1(k1);
      h1 = Long.rotateLeft(h1, 27) + h2;
      h1 = h1 * 5 + 0x52dce729;
      h2 ^= mixK2(k2);
      h2 = Long.rotateLeft(h2, 31) + h1;
      h2 = h2 * 5 + 0x38495ab5;
    }
    int rest = chars - i;
    if (rest > 0) {
      long k1 = 0;
      long k2 = 0;
      for (int j = 0; j < rest; j++) {
        long c = s.charAt(i + j);
        if (j < 4) {
          k1 |= c << (16 * j);
        } else {
          k2 |= c << (16 * (j - 4));
        }
      }
      if (rest > 4) {
        h2 ^= mixK2(k2);
      }
      h1 ^= mixK1(k1);
    }
    long length = 2L * chars;
    h1 ^= length;
    h2 ^= length;
    h1 += h2;
    h2 += h1;
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    return h1 + h2;
  }

  private static long block(CharSequence s, int at) {
    return (long) s.charAt(at)
        | ((long) s.charAt(at + 1) << 16)
        | ((long) s.charAt(at + 2) << 32)
        | ((long) s.charAt(at + 3) << 48);
  }

  private static long mixK1(long k1) {
    k1 *= C1;
    k1 = Long.rotateLeft(k1, 31);
    return k1 * C2;
  }

  private static long mixK2(long k2) {
    k2 *= C2;
    k2 = Long.rotateLeft(k2, 33);
    return k2 * C1;
  }

  /** Murmur3's finalizer: a full-avalanche mix of one long. */
  static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  /**
   * Lamping and Veach's jump consistent hash: a bucket in {@code [0, buckets)} such that growing the
   * bucket count moves only 1/n of the keys. O(log n), no memory.
   */
  static int jump(long key, int buckets) {
    long b = -1;
    long j = 0;
    while (j < buckets) {
      b = j;
      key = key * 2862933555777941757L + 1;
      j = (long) ((b + 1) * ((double) (1L << 31) / (double) ((key >>> 33) + 1)));
    }
    return (int) b;
  }
}
