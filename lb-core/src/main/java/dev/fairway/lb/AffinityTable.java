package dev.fairway.lb;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * Remembers which target each affinity key was sent to, up to {@code maxKeys} keys; beyond that the
 * oldest key is forgotten. A hit is one lock-free hash lookup and allocates nothing; only placing a
 * new key allocates.
 *
 * <p>Invalidation is O(1): each entry carries the target's affinity epoch from when it was placed,
 * and a failure bumps the target's epoch, which makes every entry that points at it stale at once.
 */
final class AffinityTable {
  static final class Entry {
    final TrackedTarget target;
    final int epoch;

    Entry(TrackedTarget target, int epoch) {
      this.target = target;
      this.epoch = epoch;
    }

    boolean valid() {
      return epoch == target.affinityEpoch && target.pickable;
    }
  }

  private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
  private final ConcurrentLinkedQueue<String> insertionOrder = new ConcurrentLinkedQueue<>();
  private final AtomicInteger size = new AtomicInteger();
  private final int maxKeys;

  AffinityTable(int maxKeys) {
    this.maxKeys = maxKeys;
  }

  @Nullable Entry get(String key) {
    return entries.get(key);
  }

  void put(String key, TrackedTarget target) {
    Entry previous = entries.put(key, new Entry(target, target.affinityEpoch));
    if (previous == null) {
      insertionOrder.add(key);
      if (size.incrementAndGet() > maxKeys) {
        String oldest = insertionOrder.poll();
        if (oldest != null && entries.remove(oldest) != null) {
          size.decrementAndGet();
        }
      }
    }
  }

  int size() {
    return size.get();
  }
}
