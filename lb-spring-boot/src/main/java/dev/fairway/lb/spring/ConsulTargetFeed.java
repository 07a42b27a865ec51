package dev.fairway.lb.spring;

import dev.fairway.lb.Subset;
import dev.fairway.lb.consul.ConsulDiscovery;
import dev.fairway.lb.consul.ConsulPeerCoordinate;
import dev.fairway.lb.consul.ConsulTargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The {@link TargetFeed} of {@code fairway.consul.enabled=true}: one {@link ConsulTargetSource} per
 * balancer, all made from the application's one {@link ConsulDiscovery} (one HTTP client, a few
 * threads, one coordinate watch), and for a service with {@code subset.size} a
 * {@link ConsulPeerCoordinate} that places this application by its own registration in Consul.
 * Thread-safe.
 */
final class ConsulTargetFeed implements TargetFeed {
  private final ConsulDiscovery discovery;
  private final FairwayConsulProperties properties;
  private final @Nullable MeterRegistry meters;
  private final Supplier<@Nullable Placement> placement;

  /** This application's place in Consul: the service it registered in and its {@code Service.ID}. */
  record Placement(String service, String instanceId) {}

  ConsulTargetFeed(ConsulDiscovery discovery, FairwayConsulProperties properties, @Nullable MeterRegistry meters,
      Supplier<@Nullable Placement> placement) {
    this.discovery = discovery;
    this.properties = properties;
    this.meters = meters;
    this.placement = placement;
  }

  @Override
  public ServiceFeed open(ServiceSettings settings) {
    Placement me = null;
    if (settings.subsetSize.value() != null) {
      me = placement.get();
      if (me == null) {
        throw unplaced(settings);
      }
    }
    ConsulTargetSource source = configure(discovery.source(settings.service)).build();
    List<AutoCloseable> resources = new ArrayList<>();
    Subset subset = null;
    try {
      if (me != null) {
        ConsulPeerCoordinate coordinate = discovery.peerCoordinate(me.service(), me.instanceId(), meters);
        resources.add(coordinate);
        subset = settings.subset(coordinate);
      }
    } catch (RuntimeException e) {
      resources.forEach(ConsulTargetFeed::closeQuietly);
      source.close();
      throw e;
    }
    resources.add(source);
    return new ServiceFeed(source, subset, resources);
  }

  /** The per-source options of {@code fairway.consul.*}, on a fresh builder (values checked at startup). */
  ConsulTargetSource.Builder configure(ConsulTargetSource.Builder b) {
    String dc = properties.getDatacenter();
    if (dc != null) {
      b.datacenter(dc);
    }
    if (properties.isPassingOnly()) {
      b.passingOnly();
    }
    b.zoneMetadataKey(properties.getZoneMetadataKey()).closeness(properties.isCloseness());
    if (meters != null) {
      b.meterRegistry(meters);
    }
    return b;
  }

  @Override
  public Duration firstReplyTimeout() {
    return properties.getFirstReplyTimeout();
  }

  static FairwayConfigurationException unplaced(ServiceSettings settings) {
    String property = settings.subsetSize.property();
    return new FairwayConfigurationException(property, property + ": " + settings.subsetSize.value()
        + " (expected: this application's place among its peers in Consul: fairway.consul.instance-id,"
        + " or a Spring Cloud service registration such as Spring Cloud Consul's)");
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // closing on the way out of a failed open: the first failure is the one thrown
    }
  }

  @Override
  public String toString() {
    return "ConsulTargetFeed{" + discovery + "}";
  }
}
