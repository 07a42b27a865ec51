package dev.fairway.lb.consul;

import static dev.fairway.lb.consul.TestSupport.fast;
import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.consul.fake.FakeConsul;
import dev.fairway.lb.consul.fake.Instance;
import dev.fairway.lb.consul.fake.NoDelayServerSocketFactory;
import dev.fairway.lb.okhttp.LoadBalancingInterceptor;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The whole path: ConsulTargetSource -> LoadBalancer -> LoadBalancingInterceptor -> two real
 * backends registered in the fake Consul. Deregistering one stops its traffic within a second, and
 * the caller never sees an error.
 */
class ConsulInterceptorEndToEndTest {
  private final FakeConsul consul = FakeConsul.start();
  private final MockWebServer one = backend("one");
  private final MockWebServer two = backend("two");
  private final AtomicInteger servedByTwo = new AtomicInteger();

  private MockWebServer backend(String name) {
    MockWebServer server = new MockWebServer();
    server.setServerSocketFactory(new NoDelayServerSocketFactory());
    server.setDispatcher(new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        if (name.equals("two")) {
          servedByTwo.incrementAndGet();
        }
        return new MockResponse.Builder().body(name).build();
      }
    });
    return server;
  }

  @AfterEach
  void stop() throws Exception {
    one.close();
    two.close();
    consul.close();
  }

  private static void call(OkHttpClient client, AtomicInteger calls, AtomicReference<Throwable> callerError) {
    try (Response r = client.newCall(new Request.Builder().url("http://orders/ping").build()).execute()) {
      if (r.code() != 200) {
        throw new AssertionError("status " + r.code());
      }
      r.body().string();
      calls.incrementAndGet();
    } catch (Throwable e) {
      callerError.compareAndSet(null, e);
    }
  }

  @Test
  void deregisteredBackend_getsNoMoreRequestsWithinASecond_andTheCallerSeesNoError() throws Exception {
    one.start(java.net.InetAddress.getByName("127.0.0.1"), 0);
    two.start(java.net.InetAddress.getByName("127.0.0.1"), 0);
    consul.register("orders", Instance.of("orders-1", "127.0.0.1", one.getPort()));
    consul.register("orders", Instance.of("orders-2", "127.0.0.1", two.getPort()));
    try (ConsulTargetSource source = fast(consul, "orders").build();
        LoadBalancer lb = LoadBalancer.builder("orders").targets(source).strategy(Strategy.roundRobin()).build()) {
      source.whenReady().get(5, TimeUnit.SECONDS);
      OkHttpClient client = new OkHttpClient.Builder()
          .addInterceptor(LoadBalancingInterceptor.builder().service("orders", lb).build())
          .callTimeout(Duration.ofSeconds(5))
          .build();
      AtomicReference<Throwable> callerError = new AtomicReference<>();
      AtomicInteger calls = new AtomicInteger();
      // Phase 1: until both backends have served some calls (bounded by 10 s).
      long warmDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (servedByTwo.get() < 10 && System.nanoTime() < warmDeadline) {
        call(client, calls, callerError);
      }
      int twoAtDeregistration = servedByTwo.get();
      consul.deregister("orders", "orders-2");
      // Phase 2: a second to notice; phase 3: 700 ms in which two must get nothing.
      long settledAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
      while (System.nanoTime() < settledAt) {
        call(client, calls, callerError);
      }
      int twoWhenSettled = servedByTwo.get();
      int callsWhenSettled = calls.get();
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(700);
      while (System.nanoTime() < end) {
        call(client, calls, callerError);
      }
      assertThat(callerError.get()).isNull();
      assertThat(twoAtDeregistration).as("two served traffic before").isGreaterThanOrEqualTo(10);
      assertThat(servedByTwo.get()).as("no request reached two after the first second").isEqualTo(twoWhenSettled);
      assertThat(calls.get()).as("calls in the last 700 ms").isGreaterThan(callsWhenSettled);
      client.dispatcher().executorService().shutdown();
      client.connectionPool().evictAll();
    }
  }
}
