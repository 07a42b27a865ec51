package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Subset;
import dev.fairway.lb.TargetSource;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One balancer's share of a {@link TargetFeed}: its live target source, its subset (null for none),
 * and what closes with it (the source, the peer coordinate). Made by {@link TargetFeed#open}; the
 * balancer's owner closes it after the balancer. Thread-safe once made.
 */
final class ServiceFeed implements AutoCloseable {
  private static final Log LOG = LogFactory.getLog(ServiceFeed.class);

  private final TargetSource source;
  private final @Nullable Subset subset;
  private final List<AutoCloseable> resources;

  /** {@code resources} are closed in order by {@link #close()}; the source is not closed unless listed. */
  ServiceFeed(TargetSource source, @Nullable Subset subset, List<AutoCloseable> resources) {
    this.source = source;
    this.subset = subset;
    this.resources = List.copyOf(resources);
  }

  /** Sets the builder's targets (and subset, if any). */
  LoadBalancer.Builder apply(LoadBalancer.Builder builder) {
    builder.targets(source);
    if (subset != null) {
      builder.subset(subset);
    }
    return builder;
  }

  /** Completes on the feed's first answer; a copy, so a caller that gives up cancels nothing shared. */
  CompletableFuture<?> whenReady() {
    return source.whenReady().thenApply(list -> list);
  }

  boolean isReady() {
    CompletableFuture<?> ready = source.whenReady();
    return ready.isDone() && !ready.isCompletedExceptionally();
  }

  TargetSource source() {
    return source;
  }

  @Nullable Subset subset() {
    return subset;
  }

  @Override
  public void close() {
    for (AutoCloseable r : resources) {
      try {
        r.close();
      } catch (Exception e) {
        LOG.warn("Fairway: closing " + r + " failed", e);
      }
    }
  }

  @Override
  public String toString() {
    return "ServiceFeed{" + source + (subset == null ? "" : ", " + subset) + "}";
  }
}
