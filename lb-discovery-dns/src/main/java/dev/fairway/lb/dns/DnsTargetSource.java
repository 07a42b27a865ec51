package dev.fairway.lb.dns;

import static dev.fairway.lb.internal.Args.invalid;
import static dev.fairway.lb.internal.Args.quote;
import static dev.fairway.lb.internal.Args.requireArgument;
import static dev.fairway.lb.internal.Args.requireUnset;

import dev.fairway.lb.Target;
import dev.fairway.lb.TargetSource;
import dev.fairway.lb.internal.DiscoveryMetrics;
import dev.fairway.lb.internal.TargetListPublisher;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import org.xbill.DNS.ExtendedResolver;
import org.xbill.DNS.Name;
import org.xbill.DNS.Resolver;
import org.xbill.DNS.SimpleResolver;
import org.xbill.DNS.TextParseException;

/**
 * A live list of targets from DNS: SRV records ({@link #srv}) or the A and AAAA records of a name with
 * a fixed port ({@link #addresses}), asked again as often as their TTLs say.
 *
 * <pre>{@code
 * DnsTargetSource orders = DnsTargetSource.srv("_http._tcp.orders.example.com")
 *     .build();                                    // resolver from /etc/resolv.conf; starts at once
 * orders.whenReady().get(5, TimeUnit.SECONDS);     // optional: wait for the first answer
 * LoadBalancer lb = LoadBalancer.builder("orders").targets(orders).build();
 * }</pre>
 *
 * <p>What it does:
 *
 * <ul>
 *   <li>SRV (RFC 2782): each record's host is resolved to its addresses (from the reply's additional
 *       section when the server put them there, else with A and AAAA questions), and each address
 *       becomes a target on the record's port: id {@code address:port}, metadata {@code dns.name} (the
 *       host), {@code dns.priority} and {@code dns.weight} (the record's). Only the lowest priority
 *       whose hosts have an address is used; the higher ones are the fallback when it has none (a
 *       balancer's own health checks do not move calls to them). SRV weight {@code w} is target weight
 *       {@code w}, split evenly over a host's addresses; all-zero weights are equal; weight 0 next to
 *       positive weights gets about 1% of a weight-1 record's share (positive weights are scaled by
 *       {@code min(100, 1,000,000 / max)}). A record whose host is {@code .} or whose port is 0 gives
 *       no target (the latter is counted in {@code fairway.discovery.skipped{reason=port_zero}}).
 *   <li>A/AAAA: each address becomes a target on the fixed port, weight 1.
 *   <li>Refresh: after an answer, the next question waits the lowest TTL among the records used
 *       (aliases and addresses included; for a negative answer, the SOA's negative TTL, RFC 2308), kept
 *       within {@link Builder#refreshBounds} (default 1 s to 5 min).
 *   <li>NXDOMAIN, no records, or SRV records that name only {@code .}: a real answer, and the list
 *       becomes empty (logged, {@code fairway.discovery.emptied}).
 *   <li>SERVFAIL, REFUSED, any other error code, a timeout or an unreadable reply: no answer; the last
 *       good list stays, the failure is logged and counted ({@code fairway.discovery.errors{reason}}:
 *       {@code servfail}, {@code refused}, {@code timeout}, {@code malformed}, {@code io}, ...), and the
 *       question is asked again after the lower refresh bound, doubling up to 30 s.
 *       {@code fairway.discovery.staleness} (a time gauge) tells how long ago the last answer came. A
 *       single SRV host whose lookup fails keeps its last known addresses (or is left out if it has
 *       none) while the others are updated.
 *   <li>Names are absolute: no search list from {@code resolv.conf} is applied, so
 *       {@code orders.default.svc.cluster.local}, not {@code orders}. Aliases (CNAME) are followed.
 * </ul>
 *
 * <p>Thread-safe. Each source has one daemon thread, {@code fairway-dns-<service>}, that asks and
 * calls the listeners, one change at a time, in order; dnsjava's I/O thread does the network I/O.
 * Every question has a timeout ({@link Builder#queryTimeout}). {@link #close()} stops the refresh at
 * once.
 */
public final class DnsTargetSource implements TargetSource {
  static final Duration DEFAULT_MIN_REFRESH = Duration.ofSeconds(1);
  static final Duration DEFAULT_MAX_REFRESH = Duration.ofMinutes(5);
  static final Duration DEFAULT_QUERY_TIMEOUT = Duration.ofSeconds(5);

  private final String name;
  private final String service;
  private final @Nullable ScheduledThreadPoolExecutor thread; // null: a test's scheduler
  private static final System.Logger LOG = System.getLogger(DnsTargetSource.class.getName());

  private final DiscoveryMetrics metrics;
  private final TargetListPublisher publisher;
  private final RefreshLoop loop;
  private final AtomicBoolean closed = new AtomicBoolean();

  private DnsTargetSource(Builder b, DnsClient client, Scheduler scheduler, LongSupplier ticker,
      @Nullable ScheduledThreadPoolExecutor thread) {
    this.name = SrvTargets.hostName(b.name);
    this.service = b.service != null ? b.service : name;
    this.thread = thread;
    this.metrics = b.meterRegistry == null
        ? DiscoveryMetrics.NOOP
        : DiscoveryMetrics.micrometer(b.meterRegistry, service, this::stalenessNanos, TimeUnit.NANOSECONDS,
            this::targetCount);
    this.publisher = new TargetListPublisher(service, "DnsTargetSource(" + service + ")", LOG, metrics);
    Duration timeout = b.queryTimeout != null ? b.queryTimeout : DEFAULT_QUERY_TIMEOUT;
    Resolution resolution = new Resolution(client, scheduler, timeout.toNanos(), !b.ipv6Only, !b.ipv4Only);
    Name queried = b.name;
    int port = b.port;
    this.loop = new RefreshLoop(service,
        port == 0 ? known -> resolution.srv(queried, known) : known -> resolution.addresses(queried, port),
        scheduler, ticker, b.minRefresh().toNanos(), b.maxRefresh().toNanos(), publisher, metrics);
    loop.start();
  }

  /**
   * A builder for a source of {@code name}'s SRV records, such as
   * {@code _http._tcp.orders.example.com}.
   *
   * @throws IllegalArgumentException if {@code name} is not a DNS name
   */
  public static Builder srv(String name) {
    return new Builder(name, 0);
  }

  /**
   * A builder for a source of {@code name}'s A and AAAA records, each address a target on {@code port}.
   *
   * @throws IllegalArgumentException if {@code name} is not a DNS name or {@code port} is outside 1..65535
   */
  public static Builder addresses(String name, int port) {
    requireArgument(port >= 1 && port <= 65535, "port", port, "1..65535");
    return new Builder(name, port);
  }

  @Override
  public List<Target> targets() {
    return publisher.targets();
  }

  @Override
  public AutoCloseable subscribe(Consumer<List<Target>> listener) {
    if (listener == null) {
      throw new IllegalArgumentException("listener: null (expected: a consumer of target lists)");
    }
    return publisher.subscribe(listener);
  }

  /**
   * Completes with the list from the first real answer, also when that list is empty (NXDOMAIN); not
   * after a failure, which is retried. Fails with {@link CancellationException} if the source is
   * closed first. Await it with a timeout: {@code whenReady().get(5, SECONDS)}.
   */
  @Override
  public CompletableFuture<List<Target>> whenReady() {
    return publisher.whenReady();
  }

  /** The DNS name asked about, without the root's trailing dot. */
  public String name() {
    return name;
  }

  /** The name in log lines and in the {@code service} tag of the meters. */
  public String service() {
    return service;
  }

  /**
   * Stops the refresh, drops the listeners, unregisters the meters and ends the source's thread (a
   * question on its way is dropped when it completes). {@link #targets()} stays readable. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    loop.close();
    publisher.close();
    metrics.close();
    ScheduledThreadPoolExecutor t = thread;
    if (t != null) {
      t.shutdownNow();
    }
  }

  @Override
  public String toString() {
    return "DnsTargetSource{" + name + ", targets=" + targets().size() + "}";
  }

  long stalenessNanos() {
    RefreshLoop l = loop;
    return l == null ? 0 : l.stalenessNanos(); // the gauge may be read before the constructor ends
  }

  private double targetCount() {
    TargetListPublisher p = publisher;
    return p == null ? 0 : p.targets().size();
  }

  // ---------------------------------------------------------------------------------------------

  /**
   * Configures a {@link DnsTargetSource}. Every setter validates its argument and names it in the
   * message ({@link IllegalArgumentException}); each option may be set once
   * ({@link IllegalStateException}). Not thread-safe.
   */
  public static final class Builder {
    private final Name name;
    private final int port; // 0: SRV
    private @Nullable InetSocketAddress resolver;
    private @Nullable Duration queryTimeout;
    private @Nullable Duration minRefresh;
    private @Nullable Duration maxRefresh;
    private @Nullable MeterRegistry meterRegistry;
    private @Nullable String service;
    private boolean ipv4Only;
    private boolean ipv6Only;
    // Test seams: all three or none.
    private @Nullable DnsClient client;
    private @Nullable Scheduler scheduler;
    private @Nullable LongSupplier ticker;

    Builder(String name, int port) {
      this.name = parse(name);
      this.port = port;
    }

    private static Name parse(String text) {
      if (text == null || text.isBlank() || !text.equals(text.strip())) {
        throw invalid("name", text, "a DNS name such as _http._tcp.orders.example.com");
      }
      try {
        Name parsed = Name.fromString(text, Name.root);
        if (parsed.equals(Name.root)) {
          throw invalid("name", text, "a DNS name other than the root");
        }
        return parsed;
      } catch (TextParseException e) {
        throw invalid("name", text, "a DNS name such as _http._tcp.orders.example.com: " + e.getMessage());
      }
    }

    /**
     * The DNS server to ask, such as {@code new InetSocketAddress("127.0.0.1", 53)}. Default: the
     * name servers of the system's configuration ({@code /etc/resolv.conf} on Linux, as dnsjava reads
     * it), tried in turn.
     */
    public Builder resolver(InetSocketAddress address) {
      requireUnset("resolver", resolver);
      if (address == null || address.isUnresolved() || address.getPort() == 0) {
        throw invalid("resolver", address, "a resolved address with a port, such as 127.0.0.1:53");
      }
      this.resolver = address;
      return this;
    }

    /** How long one question may wait for its reply. Default 5 s; 1 ms to 60 s. */
    public Builder queryTimeout(Duration timeout) {
      requireUnset("queryTimeout", queryTimeout);
      requireArgument(timeout != null && timeout.toMillis() >= 1 && timeout.compareTo(Duration.ofSeconds(60)) <= 0,
          "queryTimeout", timeout, "PT0.001S..PT60S");
      this.queryTimeout = timeout;
      return this;
    }

    /**
     * The bounds on the wait between refreshes: a TTL below {@code min} (0 included) waits {@code min},
     * one above {@code max} waits {@code max}. {@code min} is also the first retry's wait after a
     * failure. Default 1 s and 5 min, which are also the widest allowed.
     */
    public Builder refreshBounds(Duration min, Duration max) {
      requireUnset("refreshBounds", minRefresh == null ? null : minRefresh + ".." + maxRefresh);
      requireArgument(min != null && min.compareTo(DEFAULT_MIN_REFRESH) >= 0 && min.compareTo(DEFAULT_MAX_REFRESH) <= 0,
          "refreshBounds min", min, "PT1S..PT5M");
      requireArgument(max != null && max.compareTo(min) >= 0 && max.compareTo(DEFAULT_MAX_REFRESH) <= 0,
          "refreshBounds max", max, min + "..PT5M");
      this.minRefresh = min;
      this.maxRefresh = max;
      return this;
    }

    /** Only A records (IPv4): no AAAA question is asked, and AAAA records are ignored. */
    public Builder ipv4Only() {
      if (ipv6Only) {
        throw new IllegalStateException("ipv4Only: ipv6Only was already set (expected: one of them)");
      }
      this.ipv4Only = true;
      return this;
    }

    /** Only AAAA records (IPv6): no A question is asked, and A records are ignored. */
    public Builder ipv6Only() {
      if (ipv4Only) {
        throw new IllegalStateException("ipv6Only: ipv4Only was already set (expected: one of them)");
      }
      this.ipv6Only = true;
      return this;
    }

    /** The name in log lines and in the meters' {@code service} tag. Default: the DNS name. */
    public Builder service(String service) {
      requireUnset("service", this.service);
      requireArgument(service != null && !service.isBlank(), "service", service, "a non-blank name");
      this.service = service;
      return this;
    }

    /** Where the {@code fairway.discovery.*} meters go. Without it, nothing is measured. */
    public Builder meterRegistry(MeterRegistry registry) {
      requireUnset("meterRegistry", meterRegistry);
      requireArgument(registry != null, "meterRegistry", null, "a MeterRegistry");
      this.meterRegistry = registry;
      return this;
    }

    /** Test seam: the client, the scheduler and the clock instead of dnsjava, a thread and {@link System#nanoTime()}. */
    Builder testing(DnsClient client, Scheduler scheduler, LongSupplier ticker) {
      this.client = client;
      this.scheduler = scheduler;
      this.ticker = ticker;
      return this;
    }

    Duration minRefresh() {
      return minRefresh != null ? minRefresh : DEFAULT_MIN_REFRESH;
    }

    Duration maxRefresh() {
      return maxRefresh != null ? maxRefresh : DEFAULT_MAX_REFRESH;
    }

    /** Builds the source and asks at once; {@link #whenReady()} tells when DNS answered. */
    public DnsTargetSource build() {
      DnsClient c = client;
      Scheduler s = scheduler;
      LongSupplier t = ticker;
      if (c != null && s != null && t != null) {
        return new DnsTargetSource(this, c, s, t, null);
      }
      Duration timeout = queryTimeout != null ? queryTimeout : DEFAULT_QUERY_TIMEOUT;
      DnsClient dns = DnsClient.of(resolver(), timeout);
      String label = service != null ? service : SrvTargets.hostName(name);
      ScheduledThreadPoolExecutor thread = new ScheduledThreadPoolExecutor(1, r -> {
        Thread th = new Thread(r, "fairway-dns-" + label);
        th.setDaemon(true);
        return th;
      });
      thread.setRemoveOnCancelPolicy(true); // cancelled waits (close, answered questions) do not linger
      Scheduler own = new Scheduler() {
        @Override
        public Future<?> schedule(Runnable task, long delayNanos) {
          return thread.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
        }

        @Override
        public void execute(Runnable task) {
          thread.execute(task);
        }
      };
      try {
        return new DnsTargetSource(this, dns, own, System::nanoTime, thread);
      } catch (RuntimeException e) {
        thread.shutdownNow();
        throw e;
      }
    }

    private Resolver resolver() {
      InetSocketAddress address = resolver;
      if (address != null) {
        return new SimpleResolver(address);
      }
      return new ExtendedResolver(); // the system's name servers (dnsjava's ResolverConfig)
    }

    @Override
    public String toString() {
      return "DnsTargetSource.Builder{" + quote(SrvTargets.hostName(name)) + (port == 0 ? " SRV" : " port " + port) + "}";
    }
  }
}
