package dev.fairway.lb;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Where a {@link LoadBalancer} learns which targets exist. A source hands out immutable snapshots of
 * its list and tells subscribers about every change.
 *
 * <p>Implementations must be thread-safe. Listeners are called with the current list at once from
 * {@link #subscribe}, then on every change, never concurrently for one listener, and never with
 * {@code null}. Lists hold no two targets with the same id.
 */
public interface TargetSource extends AutoCloseable {

  /** The current list: immutable, possibly empty (for example before discovery's first reply). */
  List<Target> targets();

  /**
   * Calls {@code listener} with the current list at once, then with each new list. Closing the
   * returned handle stops the calls; it throws no checked exception.
   */
  AutoCloseable subscribe(Consumer<List<Target>> listener);

  /** Completes with the first known list (at once for a static source). */
  CompletableFuture<List<Target>> whenReady();

  /** A source that never changes. Duplicate ids and null elements are rejected. */
  static TargetSource of(Target... targets) {
    if (targets == null) {
      throw new IllegalArgumentException("targets: null (expected: an array of targets)");
    }
    return of(Arrays.asList(targets));
  }

  /** A source that never changes. Duplicate ids and null elements are rejected. */
  static TargetSource of(List<Target> targets) {
    return new MutableTargetSource(targets).frozen();
  }

  /** Stops this source (discovery threads, connections). Throws no checked exception. */
  @Override
  void close();
}
