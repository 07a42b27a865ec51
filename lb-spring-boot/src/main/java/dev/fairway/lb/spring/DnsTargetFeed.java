package dev.fairway.lb.spring;

import dev.fairway.lb.dns.DnsTargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The {@link TargetFeed} of {@code fairway.dns.enabled=true}: one {@link DnsTargetSource} per
 * balancer, asking for the records {@code fairway.dns.services.<id>} names (SRV, or A/AAAA with a port)
 * as often as their TTLs say. Thread-safe.
 */
final class DnsTargetFeed implements TargetFeed {
  static final String PREFIX = "fairway.dns.";

  private final FairwayDnsProperties properties;
  private final @Nullable InetSocketAddress resolver;
  private final @Nullable MeterRegistry meters;

  /** Checks every setting of {@code properties} now, so a bad value stops startup naming its property. */
  DnsTargetFeed(FairwayDnsProperties properties, @Nullable MeterRegistry meters) {
    this.properties = properties;
    this.meters = meters;
    String address = properties.getResolver();
    this.resolver = address == null ? null : resolver(address);
    configure(DnsTargetSource.srv("fairway.check"));
    for (Map.Entry<String, FairwayDnsProperties.Service> e : properties.getServices().entrySet()) {
      builder(e.getKey(), e.getValue());
    }
  }

  @Override
  public ServiceFeed open(ServiceSettings settings) {
    FairwayDnsProperties.Service service = properties.getServices().get(settings.service);
    if (service == null) {
      String property = PREFIX + "services." + settings.service + ".srv";
      throw new FairwayConfigurationException(property, property + ": not set (expected: the service's SRV name,"
          + " or " + PREFIX + "services." + settings.service + ".name with .port for its A/AAAA records)");
    }
    DnsTargetSource source = configure(builder(settings.service, service)).build();
    return new ServiceFeed(source, null, List.of(source));
  }

  /** The builder of one service's records, its name and port checked, and the service id in logs and meters. */
  private static DnsTargetSource.Builder builder(String id, FairwayDnsProperties.Service s) {
    String prefix = PREFIX + "services." + id + ".";
    String srv = s.getSrv();
    String name = s.getName();
    Integer port = s.getPort();
    DnsTargetSource.Builder b;
    if (srv != null) {
      if (name != null || port != null) {
        String other = name != null ? "name" : "port";
        throw new FairwayConfigurationException(prefix + other, prefix + other + ": " + (name != null ? name : port)
            + " set with " + prefix + "srv " + srv + " (expected: srv, or name with port)");
      }
      b = built(prefix + "srv", () -> DnsTargetSource.srv(srv));
    } else if (name != null && port != null) {
      built(prefix + "name", () -> DnsTargetSource.addresses(name, 80));
      b = built(prefix + "port", () -> DnsTargetSource.addresses(name, port));
    } else {
      String missing = name == null ? "name" : "port";
      throw new FairwayConfigurationException(prefix + missing, prefix + missing + ": not set (expected: " + prefix
          + "srv, or " + prefix + "name with " + prefix + "port)");
    }
    return b.service(id);
  }

  /** The shared settings of {@code fairway.dns.*} on a builder, each through the builder's own check. */
  private DnsTargetSource.Builder configure(DnsTargetSource.Builder b) {
    InetSocketAddress r = resolver;
    if (r != null) {
      check(PREFIX + "resolver", () -> {
        b.resolver(r);
      });
    }
    Duration timeout = properties.getQueryTimeout();
    check(PREFIX + "query-timeout", () -> {
      b.queryTimeout(timeout);
    });
    Duration min = properties.getRefresh().getMin();
    Duration max = properties.getRefresh().getMax();
    check(PREFIX + "refresh.min", () -> {
      DnsTargetSource.srv("fairway.check").refreshBounds(min, min);
    });
    check(PREFIX + "refresh.max", () -> {
      b.refreshBounds(min, max);
    });
    Duration first = properties.getFirstReplyTimeout();
    if (first == null || first.isNegative() || first.toMinutes() > 10) {
      throw new FairwayConfigurationException(PREFIX + "first-reply-timeout", PREFIX + "first-reply-timeout: " + first
          + " (expected: 0s..10m)");
    }
    if (meters != null) {
      b.meterRegistry(meters);
    }
    return b;
  }

  /** {@code host:port} or {@code [v6]:port}; the host an IP address or a name resolved once, now. */
  static InetSocketAddress resolver(String text) {
    String property = PREFIX + "resolver";
    String expected = " (expected: host:port such as 127.0.0.1:53, or [::1]:53)";
    String host;
    String port;
    if (text.startsWith("[")) {
      int close = text.indexOf("]:");
      if (close < 0) {
        throw new FairwayConfigurationException(property, property + ": " + text + expected);
      }
      host = text.substring(1, close);
      port = text.substring(close + 2);
    } else {
      int colon = text.lastIndexOf(':');
      if (colon <= 0 || text.indexOf(':') != colon) {
        throw new FairwayConfigurationException(property, property + ": " + text + expected);
      }
      host = text.substring(0, colon);
      port = text.substring(colon + 1);
    }
    int number;
    try {
      number = Integer.parseInt(port);
    } catch (NumberFormatException e) {
      number = -1;
    }
    if (number < 1 || number > 65535 || host.isBlank()) {
      throw new FairwayConfigurationException(property, property + ": " + text + expected);
    }
    try {
      return new InetSocketAddress(InetAddress.getByName(host), number);
    } catch (UnknownHostException e) {
      throw new FairwayConfigurationException(property, property + ": " + text + " (expected: a host that resolves,"
          + " or an IP address: " + e.getMessage() + ")");
    }
  }

  private static <T> T built(String property, Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException e) {
      throw FairwayConfigurationException.of(property, e);
    }
  }

  private static void check(String property, Runnable step) {
    try {
      step.run();
    } catch (IllegalArgumentException e) {
      throw FairwayConfigurationException.of(property, e);
    }
  }

  @Override
  public Duration firstReplyTimeout() {
    return properties.getFirstReplyTimeout();
  }

  @Override
  public String toString() {
    return "DnsTargetFeed{resolver=" + (resolver == null ? "system" : resolver) + ", services="
        + properties.getServices().keySet() + "}";
  }
}
