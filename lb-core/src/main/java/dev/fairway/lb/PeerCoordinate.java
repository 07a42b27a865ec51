package dev.fairway.lb;

import java.util.Optional;
import java.util.function.Consumer;

/**
 * Where a balancer learns its {@link PeerPosition} for deterministic subsetting: fixed, or live (for
 * example this client's place among its own service's instances in Consul). An empty position means
 * "not known": the balancer then runs over every target, without a subset.
 *
 * <p>Implementations must be thread-safe. Listeners are called with the current position at once
 * from {@link #subscribe}, then on every change, never concurrently for one listener, and never with
 * {@code null}.
 */
public interface PeerCoordinate {

  /** The current position, or empty while it is not known. */
  Optional<PeerPosition> current();

  /**
   * Calls {@code listener} with the current position at once, then with each new one. Closing the
   * returned handle stops the calls; it throws no checked exception.
   */
  AutoCloseable subscribe(Consumer<Optional<PeerPosition>> listener);

  /** A position that never changes. */
  static PeerCoordinate fixed(int index, int count) {
    PeerPosition position = new PeerPosition(index, count);
    Optional<PeerPosition> current = Optional.of(position);
    return new PeerCoordinate() {
      @Override
      public Optional<PeerPosition> current() {
        return current;
      }

      @Override
      public AutoCloseable subscribe(Consumer<Optional<PeerPosition>> listener) {
        if (listener == null) {
          throw new IllegalArgumentException("listener: null (expected: a Consumer)");
        }
        listener.accept(current);
        return () -> { };
      }

      @Override
      public String toString() {
        return "PeerCoordinate.fixed(" + position.index() + ", " + position.count() + ")";
      }
    };
  }
}
