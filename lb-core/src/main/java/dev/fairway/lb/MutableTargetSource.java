package dev.fairway.lb;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A {@link TargetSource} for code that manages its own list: set, add and remove targets, and every
 * subscribed {@link LoadBalancer} sees the change at once.
 *
 * <p>Thread-safe. Changes are applied one at a time and listeners see them in order. A change that
 * leaves the list as it was (same targets, same weights, zones, addresses) notifies nobody.
 */
public final class MutableTargetSource implements TargetSource {
  private final ReentrantLock lock = new ReentrantLock();
  private final CopyOnWriteArrayList<Consumer<List<Target>>> listeners = new CopyOnWriteArrayList<>();
  private final boolean frozen;
  private volatile List<Target> targets;

  /**
   * @throws IllegalArgumentException if the list is null, holds null, or holds two targets with one id
   */
  public MutableTargetSource(List<Target> initial) {
    this(checked(initial), false);
  }

  private MutableTargetSource(List<Target> checkedInitial, boolean frozen) {
    this.targets = checkedInitial;
    this.frozen = frozen;
  }

  MutableTargetSource frozen() {
    return new MutableTargetSource(targets, true);
  }

  @Override
  public List<Target> targets() {
    return targets;
  }

  /** Replaces the whole list. */
  public void set(List<Target> targets) {
    update(checked(targets));
  }

  /** Adds a target, or replaces the one with the same id (a new weight, say). */
  public void add(Target t) {
    Target.requireNonNull(t, "target");
    lock.lock();
    try {
      List<Target> next = new ArrayList<>(targets.size() + 1);
      boolean replaced = false;
      for (Target old : targets) {
        if (old.equals(t)) {
          next.add(t);
          replaced = true;
        } else {
          next.add(old);
        }
      }
      if (!replaced) {
        next.add(t);
      }
      update(List.copyOf(next));
    } finally {
      lock.unlock();
    }
  }

  /** Removes the target with {@code t}'s id, if present. */
  public void remove(Target t) {
    Target.requireNonNull(t, "target");
    lock.lock();
    try {
      List<Target> next = new ArrayList<>(targets);
      if (next.remove(t)) {
        update(List.copyOf(next));
      }
    } finally {
      lock.unlock();
    }
  }

  private void update(List<Target> next) {
    if (frozen) {
      throw new UnsupportedOperationException("this target source is static");
    }
    lock.lock();
    try {
      if (dev.fairway.lb.internal.Targets.sameTargets(targets, next)) {
        return;
      }
      targets = next;
      for (Consumer<List<Target>> l : listeners) {
        l.accept(next);
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public AutoCloseable subscribe(Consumer<List<Target>> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener: null (expected: a consumer of target lists)");
    }
    lock.lock();
    try {
      listeners.add(listener);
      listener.accept(targets);
    } finally {
      lock.unlock();
    }
    return () -> listeners.remove(listener);
  }

  @Override
  public CompletableFuture<List<Target>> whenReady() {
    return CompletableFuture.completedFuture(targets);
  }

  /** Drops all listeners. The list stays readable. */
  @Override
  public void close() {
    listeners.clear();
  }

  @Override
  public String toString() {
    return (frozen ? "TargetSource.of" : "MutableTargetSource") + targets;
  }

  private static List<Target> checked(List<Target> targets) {
    if (targets == null) {
      throw new IllegalArgumentException("targets: null (expected: a list of targets)");
    }
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < targets.size(); i++) {
      Target t = targets.get(i);
      if (t == null) {
        throw new IllegalArgumentException("targets[" + i + "]: null (expected: a Target)");
      }
      if (!ids.add(t.id())) {
        throw new IllegalArgumentException("targets[" + i + "]: duplicate id " + t.id() + " (expected: unique ids)");
      }
    }
    return List.copyOf(targets);
  }
}
