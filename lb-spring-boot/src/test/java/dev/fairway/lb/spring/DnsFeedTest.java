package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetStatus;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalancerClient;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.xbill.DNS.ARecord;
import org.xbill.DNS.DClass;
import org.xbill.DNS.Flags;
import org.xbill.DNS.Message;
import org.xbill.DNS.Name;
import org.xbill.DNS.Record;
import org.xbill.DNS.SRVRecord;
import org.xbill.DNS.Section;
import org.xbill.DNS.Type;

/**
 * {@code fairway.dns.*} in a Boot context, against a small DNS server on a loopback UDP port: every
 * balancer, on the Spring Cloud LoadBalancer path and the OkHttp path, is fed by the records its
 * {@code fairway.dns.services.<id>} names, and follows them when they change. Spring's simple
 * discovery lists "orders" at port 1, so a pick that came from it would show. Picks are only chosen,
 * never sent.
 */
class DnsFeedTest {
  private static final Duration BOUND = Duration.ofSeconds(10);

  private final TinyDns dns = new TinyDns();

  @AfterEach
  void stop() {
    dns.close();
  }

  private ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(
            FairwayAutoConfiguration.class,
            FairwayConsulAutoConfiguration.class,
            FairwayKubernetesAutoConfiguration.class,
            FairwayDnsAutoConfiguration.class,
            FairwayLoadBalancerAutoConfiguration.class,
            FairwayOkHttpAutoConfiguration.class,
            org.springframework.cloud.commons.util.UtilAutoConfiguration.class,
            org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration.class,
            org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration.class,
            org.springframework.cloud.client.loadbalancer.LoadBalancerAutoConfiguration.class,
            org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration.class,
            org.springframework.cloud.loadbalancer.config.BlockingLoadBalancerClientAutoConfiguration.class))
        .withPropertyValues("fairway.dns.enabled=true", "fairway.dns.resolver=127.0.0.1:" + dns.port(),
            "fairway.dns.query-timeout=2s", "fairway.dns.refresh.min=1s", "fairway.dns.refresh.max=1s",
            "spring.cloud.discovery.client.simple.instances.orders[0].uri=http://127.0.0.1:1");
  }

  @Test
  void srvRecords_feedTheSpringBalancer_andAChangeReachesIt() throws Exception {
    dns.answer("_http._tcp.orders.test.", Type.SRV, srv("_http._tcp.orders.test.", 18081, "o1.test."),
        srv("_http._tcp.orders.test.", 18082, "o2.test."));
    dns.answer("o1.test.", Type.A, a("o1.test.", "127.0.0.11"));
    dns.answer("o2.test.", Type.A, a("o2.test.", "127.0.0.12"));
    runner().withPropertyValues("fairway.dns.services.orders.srv=_http._tcp.orders.test").run(context -> {
      assertThat(context).hasNotFailed().hasSingleBean(DnsTargetFeed.class).hasSingleBean(TargetFeed.class);
      LoadBalancer lb = springBalancer(context, "orders");
      await("the SRV targets", () -> hostPorts(lb), Set.of("127.0.0.11:18081", "127.0.0.12:18082")::equals);
      assertThat(choose(context, 6)).containsOnly("127.0.0.11:18081", "127.0.0.12:18082");

      // The records change; the next refresh (TTL 1 s, bounds 1 s) carries it to the balancer.
      dns.answer("_http._tcp.orders.test.", Type.SRV, srv("_http._tcp.orders.test.", 18082, "o2.test."));
      await("o1 gone", () -> hostPorts(lb), Set.of("127.0.0.12:18082")::equals);
      assertThat(choose(context, 3)).containsOnly("127.0.0.12:18082");
    });
  }

  @Test
  void addressRecords_withAPort_feedTheOkHttpPath() throws Exception {
    dns.answer("billing.test.", Type.A, a("billing.test.", "127.0.0.21"), a("billing.test.", "127.0.0.22"));
    runner().withPropertyValues("fairway.okhttp.enabled=true", "fairway.services.billing.strategy=round-robin",
        "fairway.dns.services.billing.name=billing.test", "fairway.dns.services.billing.port=8080").run(context -> {
          assertThat(context).hasNotFailed();
          LoadBalancer okhttp = context.getBean(FairwayOkHttp.class).balancers().get("billing");
          assertThat(okhttp).as("the OkHttp path's balancer of billing").isNotNull();
          await("the A records on port 8080", () -> hostPorts(okhttp),
              Set.of("127.0.0.21:8080", "127.0.0.22:8080")::equals);
          dns.answer("billing.test.", Type.A, a("billing.test.", "127.0.0.23"));
          await("the changed A record", () -> hostPorts(okhttp), Set.of("127.0.0.23:8080")::equals);
        });
  }

  @Test
  void aServiceWithoutRecordsConfigured_failsNamingItsProperty() {
    runner().withPropertyValues("fairway.dns.services.orders.srv=_http._tcp.orders.test").run(context -> {
      assertThat(context).hasNotFailed();
      TargetFeed feed = context.getBean(TargetFeed.class);
      FairwaySettings settings = context.getBean(FairwaySettings.class);
      try {
        feed.open(settings.forService("payments")).close();
        throw new AssertionError("payments has no records configured");
      } catch (FairwayConfigurationException e) {
        assertThat(e.property()).isEqualTo("fairway.dns.services.payments.srv");
        assertThat(e).hasMessageContaining("fairway.dns.services.payments.name with .port");
      }
    });
  }

  @Test
  void backsOff_whenNotEnabled_orWithoutLbDiscoveryDns() {
    runner().withPropertyValues("fairway.dns.enabled=false").run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(DnsTargetFeed.class).doesNotHaveBean(TargetFeed.class);
      assertThat(choose(context, 1)).containsExactly("127.0.0.1:1"); // the simple discovery's list
    });
    runner().withClassLoader(new FilteredClassLoader("dev.fairway.lb.dns")).run(context -> {
      assertThat(context).hasNotFailed().doesNotHaveBean(TargetFeed.class);
      assertThat(choose(context, 1)).containsExactly("127.0.0.1:1");
    });
    assertThat(dns.questions()).isZero();
  }

  @Test
  void twoFeedsEnabled_failStartup_namingBoth() {
    runner().withPropertyValues("fairway.consul.enabled=true").run(context -> assertThat(KubernetesFeedTest
        .cause(context)).hasMessageStartingWith("fairway.consul.enabled=true and fairway.dns.enabled=true"));
  }

  @Test
  void badValues_failStartup_namingTheProperty() {
    Map<String, String> bad = new TreeMap<>();
    bad.put("fairway.dns.resolver=localhost", "fairway.dns.resolver: localhost (expected: host:port");
    bad.put("fairway.dns.query-timeout=0s", "fairway.dns.query-timeout: PT0S (expected: PT0.001S..PT60S)");
    bad.put("fairway.dns.refresh.min=0s", "fairway.dns.refresh.min: PT0S (expected: PT1S..PT5M)");
    bad.put("fairway.dns.refresh.max=10m", "fairway.dns.refresh.max: PT10M (expected: PT1S..PT5M)");
    bad.put("fairway.dns.first-reply-timeout=11m", "fairway.dns.first-reply-timeout: PT11M (expected: 0s..10m)");
    bad.put("fairway.dns.services.orders.port=80", "fairway.dns.services.orders.name: not set");
    bad.put("fairway.dns.services.orders.srv=bad..name", "fairway.dns.services.orders.srv: ");
    List<String> seen = new ArrayList<>();
    bad.forEach((setting, message) -> runner().withPropertyValues(setting).run(context -> {
      Throwable t = KubernetesFeedTest.cause(context);
      assertThat(t).as(setting).hasMessageStartingWith(message);
      seen.add(((FairwayConfigurationException) t).property());
    }));
    assertThat(seen).hasSize(bad.size()).allMatch(p -> p.startsWith("fairway.dns."));
  }

  // ---------------------------------------------------------------------------------------------

  private static Record srv(String name, int port, String host) {
    return new SRVRecord(Name.fromConstantString(name), DClass.IN, 1, 1, 10, port, Name.fromConstantString(host));
  }

  private static Record a(String name, String address) {
    try {
      return new ARecord(Name.fromConstantString(name), DClass.IN, 1, InetAddress.getByName(address));
    } catch (IOException e) {
      throw new IllegalArgumentException(address, e);
    }
  }

  /**
   * A DNS server on a loopback UDP port that answers from a table (name and type to records, TTL 1 s),
   * NOERROR with no records for anything else. One daemon thread; {@link #close()} ends it.
   */
  private static final class TinyDns implements AutoCloseable {
    private final DatagramSocket socket;
    private final Map<String, List<Record>> table = new ConcurrentHashMap<>();
    private final Thread thread;
    private final AtomicInteger questions = new AtomicInteger();

    TinyDns() {
      try {
        socket = new DatagramSocket(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      } catch (SocketException e) {
        throw new IllegalStateException(e);
      }
      thread = new Thread(this::serve, "tiny-dns");
      thread.setDaemon(true);
      thread.start();
    }

    int port() {
      return socket.getLocalPort();
    }

    int questions() {
      return questions.get();
    }

    void answer(String name, int type, Record... records) {
      table.put(name.toLowerCase(Locale.ROOT) + " " + type, List.of(records));
    }

    private void serve() {
      byte[] buffer = new byte[512];
      while (!socket.isClosed()) {
        DatagramPacket in = new DatagramPacket(buffer, buffer.length);
        try {
          socket.receive(in);
          Message query = new Message(Arrays.copyOf(in.getData(), in.getLength()));
          questions.incrementAndGet();
          Record question = query.getQuestion();
          Message reply = new Message(query.getHeader().getID());
          reply.getHeader().setFlag(Flags.QR);
          reply.getHeader().setFlag(Flags.AA);
          if (query.getHeader().getFlag(Flags.RD)) {
            reply.getHeader().setFlag(Flags.RD);
          }
          reply.addRecord(question, Section.QUESTION);
          String key = question.getName().toString().toLowerCase(Locale.ROOT) + " " + question.getType();
          for (Record r : table.getOrDefault(key, List.of())) {
            reply.addRecord(r, Section.ANSWER);
          }
          byte[] out = reply.toWire(512);
          socket.send(new DatagramPacket(out, out.length, in.getSocketAddress()));
        } catch (IOException e) {
          if (socket.isClosed()) {
            return;
          }
          // an unreadable datagram: no reply, as a server would drop it; the client times out and asks again
        }
      }
    }

    @Override
    public void close() {
      socket.close();
    }
  }

  /** The Spring Cloud LoadBalancer client context of {@code service}, created now, and its Fairway balancer. */
  private static LoadBalancer springBalancer(AssertableApplicationContext context, String service) {
    assertThat(context.getBean(LoadBalancerClientFactory.class).getInstance(service))
        .isInstanceOf(FairwayReactorLoadBalancer.class);
    LoadBalancer lb = context.getBean(FairwayBalancers.class).balancers().get(service);
    assertThat(lb).as("the balancer of %s", service).isNotNull();
    return lb;
  }

  private static Set<String> hostPorts(LoadBalancer lb) {
    Set<String> out = new TreeSet<>();
    for (TargetStatus s : lb.status()) {
      out.add(s.target().host() + ":" + s.target().port());
    }
    return out;
  }

  /** host:port of {@code n} picks made through Spring Cloud LoadBalancer's client, each released. */
  private static List<String> choose(AssertableApplicationContext context, int n) {
    LoadBalancerClient client = context.getBean(LoadBalancerClient.class);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ServiceInstance chosen = client.choose("orders");
      assertThat(chosen).isNotNull();
      out.add(chosen.getHost() + ":" + chosen.getPort());
      if (chosen instanceof FairwayServiceInstance f) {
        f.success();
      }
    }
    return out;
  }

  /** Polls {@code value} until {@code done} holds, for at most {@link #BOUND}; returns the last value. */
  private static <T> T await(String what, Supplier<T> value, Predicate<T> done) throws InterruptedException {
    long deadline = System.nanoTime() + BOUND.toNanos();
    T last = value.get();
    while (!done.test(last) && System.nanoTime() < deadline) {
      Thread.sleep(10);
      last = value.get();
    }
    assertThat(done.test(last)).as("%s within %s; last: %s", what, BOUND, last).isTrue();
    return last;
  }
}
