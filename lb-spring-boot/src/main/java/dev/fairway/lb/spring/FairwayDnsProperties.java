package dev.fairway.lb.spring;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code fairway.dns.*} properties: each service's balancer fed from DNS (lb-discovery-dns), on
 * the Spring Cloud LoadBalancer path and the OkHttp path alike, instead of Spring Cloud's discovery.
 * Each service says where its records are: SRV records, or the A/AAAA records of a name with a port.
 *
 * <pre>
 * fairway.dns.enabled=true
 * fairway.dns.services.orders.srv=_http._tcp.orders.example.com
 * fairway.dns.services.billing.name=billing.default.svc.cluster.local
 * fairway.dns.services.billing.port=8080
 * </pre>
 *
 * <p>Checked at startup; a bad value stops it naming the property. Mutable, as Boot's binding needs.
 */
@ConfigurationProperties("fairway.dns")
public class FairwayDnsProperties {
  /** True feeds every balancer from the DNS records set under fairway.dns.services. Default false. */
  private boolean enabled;

  /** The DNS server to ask, host:port (an IPv6 address in brackets). Default: the system's name servers (/etc/resolv.conf). */
  private @Nullable String resolver;

  /** How long one question may wait for its reply, 1ms to 60s. Default 5s. */
  private Duration queryTimeout = Duration.ofSeconds(5);

  /** How long a balancer's first pick waits for the first answer about its service. Default 5s. */
  private Duration firstReplyTimeout = Duration.ofSeconds(5);

  private final Refresh refresh = new Refresh();

  /** Per service id: where its records are (srv, or name and port). A service without an entry cannot be balanced. */
  private final Map<String, Service> services = new LinkedHashMap<>();

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public @Nullable String getResolver() {
    return resolver;
  }

  public void setResolver(@Nullable String resolver) {
    this.resolver = resolver;
  }

  public Duration getQueryTimeout() {
    return queryTimeout;
  }

  public void setQueryTimeout(Duration queryTimeout) {
    this.queryTimeout = queryTimeout;
  }

  public Duration getFirstReplyTimeout() {
    return firstReplyTimeout;
  }

  public void setFirstReplyTimeout(Duration firstReplyTimeout) {
    this.firstReplyTimeout = firstReplyTimeout;
  }

  public Refresh getRefresh() {
    return refresh;
  }

  public Map<String, Service> getServices() {
    return services;
  }

  /** The bounds on the wait between questions, which otherwise follows the records' TTLs. */
  public static class Refresh {
    /** The shortest wait between refreshes (a lower TTL waits this long), also the first retry's wait after a failure; 1s to 5m. Default 1s. */
    private Duration min = Duration.ofSeconds(1);

    /** The longest wait between refreshes (a higher TTL waits this long); min to 5m. Default 5m. */
    private Duration max = Duration.ofMinutes(5);

    public Duration getMin() {
      return min;
    }

    public void setMin(Duration min) {
      this.min = min;
    }

    public Duration getMax() {
      return max;
    }

    public void setMax(Duration max) {
      this.max = max;
    }
  }

  /** Where one service's records are: srv, or name with port. */
  public static class Service {
    /** The SRV name, such as _http._tcp.orders.example.com: each record's host and port become targets. */
    private @Nullable String srv;

    /** A name whose A and AAAA records are the targets, on port; instead of srv. */
    private @Nullable String name;

    /** The targets' port with name, 1 to 65535. */
    private @Nullable Integer port;

    public @Nullable String getSrv() {
      return srv;
    }

    public void setSrv(@Nullable String srv) {
      this.srv = srv;
    }

    public @Nullable String getName() {
      return name;
    }

    public void setName(@Nullable String name) {
      this.name = name;
    }

    public @Nullable Integer getPort() {
      return port;
    }

    public void setPort(@Nullable Integer port) {
      this.port = port;
    }
  }
}
