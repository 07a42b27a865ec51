package dev.fairway.lb.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.TargetState;
import dev.fairway.lb.TargetStatus;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.annotation.Bean;
import java.util.concurrent.CopyOnWriteArrayList;
import org.springframework.context.ConfigurableApplicationContext;

/** The OkHttp path in a Boot context: an OkHttpClient bean balancing the services under fairway.services. */
class OkHttpPathTest {
  private final Instances instances = new Instances();
  private ConfigurableApplicationContext context;

  @AfterEach
  void close() throws IOException {
    if (context != null) {
      context.close();
    }
    instances.close();
  }

  @SpringBootConfiguration
  @EnableAutoConfiguration
  static class App {
    /** Discovery whose list the test changes while the application runs. */
    @Bean
    ListedDiscovery listedDiscovery() {
      return new ListedDiscovery();
    }
  }

  /** The instances of "orders", read on every getInstances call. */
  static final List<ServiceInstance> ORDERS = new CopyOnWriteArrayList<>();

  static final class ListedDiscovery implements DiscoveryClient {

    @Override
    public String description() {
      return "the test's list";
    }

    @Override
    public List<ServiceInstance> getInstances(String serviceId) {
      return serviceId.equals("orders") ? List.copyOf(ORDERS) : List.of();
    }

    @Override
    public List<String> getServices() {
      return List.of("orders");
    }
  }

  private OkHttpClient start(String... properties) {
    ORDERS.clear();
    for (int i = 0; i < instances.ports.size(); i++) {
      ORDERS.add(new DefaultServiceInstance("i" + i, "orders", "127.0.0.1", instances.ports.get(i), false));
    }
    List<String> all = new ArrayList<>(List.of("spring.main.web-application-type=none", "fairway.okhttp.enabled=true"));
    all.addAll(List.of(properties));
    context = new SpringApplicationBuilder(App.class).properties(all.toArray(String[]::new)).run();
    return context.getBean(OkHttpClient.class);
  }

  private static String get(OkHttpClient client) throws IOException {
    try (Response r = client.newCall(new Request.Builder().url("http://orders/work").build()).execute()) {
      return r.body().string();
    }
  }

  @Test
  void okHttpClientBean_balancesDiscoveredInstances_refreshes_andShutsDownWithTheContext() throws Exception {
    MockWebServer a = instances.ok("a");
    MockWebServer b = instances.ok("b");
    int refusing = instances.refusing();
    OkHttpClient client = start("fairway.services.orders.strategy=round-robin", "fairway.okhttp.refresh-interval=50ms");

    for (int i = 0; i < 12; i++) {
      assertThat(get(client)).isIn("a", "b"); // the interceptor retries a refused connect elsewhere
    }
    assertThat(a.getRequestCount() + b.getRequestCount()).isEqualTo(12);
    LoadBalancer balancer = context.getBean(FairwayBalancers.class).balancers().get("okhttp:orders");
    assertThat(balancer.status()).filteredOn(s -> s.target().port() == refusing)
        .singleElement().extracting(TargetStatus::state).isEqualTo(TargetState.EJECTED);

    // A new instance in discovery reaches the balancer at the next read.
    MockWebServer c = instances.ok("c");
    ORDERS.add(new DefaultServiceInstance("i3", "orders", "127.0.0.1", c.getPort(), false));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (balancer.status().size() < 4 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(balancer.status()).extracting(s -> s.target().id()).containsExactly("i0", "i1", "i2", "i3");

    FairwayBalancers registry = context.getBean(FairwayBalancers.class);
    context.close();
    assertThat(client.dispatcher().executorService().isShutdown()).isTrue();
    assertThat(client.connectionPool().connectionCount()).isZero();
    assertThat(registry.balancers()).doesNotContainKey("okhttp:orders");
  }

  @Test
  void hedging_sendsASecondCopyToAnotherInstance() throws Exception {
    MockWebServer slow = instances.server(request ->
        new MockResponse.Builder().code(200).body("slow").headersDelay(1, TimeUnit.SECONDS).build());
    MockWebServer fast = instances.ok("fast");
    // The hedge delay leaves the first copy time to reach the slow instance even on a loaded machine
    // (at 20 ms a copy still connecting was cancelled before the server saw it); 1 s of headers delay
    // still makes every call that starts there a hedged one.
    OkHttpClient client = start("fairway.services.orders.strategy=round-robin", "fairway.services.orders.hedging=200ms");

    for (int i = 0; i < 4; i++) {
      assertThat(get(client)).isEqualTo("fast"); // a call that went to the slow one was hedged
    }
    // Every call was answered by the fast instance, once: directly, or as the hedge of a call that
    // round robin sent to the slow one first (hedges pick too, so the rotation shifts; at least one
    // call starts on the slow instance).
    assertThat(fast.getRequestCount()).isEqualTo(4);
    assertThat(slow.getRequestCount()).isBetween(1, 4);
  }
}
