package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.testing.Closer;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The optional Observation around each balanced call: named, tagged, one per call, with its error. */
class CallObservationTest {
  private final Closer closer = new Closer();
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final ObservationRegistry registry = ObservationRegistry.create();

  CallObservationTest() {
    registry.observationConfig().observationHandler(new ObservationHandler<Observation.Context>() {
      @Override
      public boolean supportsContext(Observation.Context context) {
        return true;
      }

      @Override
      public void onStart(Observation.Context c) {
        events.add("start " + c.getName() + " " + keys(c.getLowCardinalityKeyValues()));
      }

      @Override
      public void onError(Observation.Context c) {
        events.add("error " + c.getError().getClass().getSimpleName());
      }

      @Override
      public void onStop(Observation.Context c) {
        events.add("stop " + c.getContextualName() + " " + keys(c.getLowCardinalityKeyValues())
            + " " + keys(c.getHighCardinalityKeyValues()));
      }
    });
  }

  private static String keys(Iterable<KeyValue> kvs) {
    StringBuilder sb = new StringBuilder();
    for (KeyValue kv : kvs) {
      sb.append(sb.length() == 0 ? "" : ",").append(kv.getKey()).append('=').append(kv.getValue());
    }
    return "{" + sb + "}";
  }

  @AfterEach
  void close() throws Exception {
    closer.close();
  }

  @Test
  void eachBalancedCall_isOneObservation_taggedWithServiceAndTheTargetThatAnswered() throws Exception {
    Backends b = closer.add(Backends.named(1));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.target(0)).build());
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .observationRegistry(registry).build());

    try (Response r = client.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(r.body().string()).isEqualTo("s0");
    }

    assertThat(events).containsExactly("start fairway.call {service=orders}",
        "stop fairway orders {service=orders} {target=" + b.target(0).id() + "}");
  }

  @Test
  void aCallThatFails_recordsTheError_andNoTarget() throws Exception {
    Backends b = closer.add(Backends.named(1));
    Target dead = Target.of("127.0.0.1", 1); // nothing listens on port 1
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(dead).build());
    OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).maxAttempts(1)
        .observationRegistry(registry).build());

    assertThatThrownBy(() -> client.newCall(new Request.Builder().url("http://orders/x").build()).execute())
        .isInstanceOf(IOException.class);

    assertThat(events).hasSize(3);
    assertThat(events.get(0)).isEqualTo("start fairway.call {service=orders}");
    assertThat(events.get(1)).startsWith("error ");
    assertThat(events.get(2)).isEqualTo("stop fairway orders {service=orders} {}");
  }

  @Test
  void unbalancedHosts_andInterceptorsWithoutARegistry_areNotObserved() throws Exception {
    Backends b = closer.add(Backends.named(1));
    LoadBalancer lb = closer.add(LoadBalancer.builder("orders").targets(b.target(0)).build());
    OkHttpClient observed = b.client(LoadBalancingInterceptor.builder().service("orders", lb)
        .observationRegistry(registry).build());
    OkHttpClient plain = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());

    Target direct = b.target(0);
    try (Response r = observed.newCall(new Request.Builder()
        .url("http://" + direct.host() + ":" + direct.port() + "/x").build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    try (Response r = plain.newCall(new Request.Builder().url("http://orders/x").build()).execute()) {
      assertThat(r.code()).isEqualTo(200);
    }
    assertThat(events).isEmpty();
  }

  @Test
  void address_bracketsIpv6() {
    assertThat(CallObservation.address(HttpUrl.get("http://[::1]:8080/x"))).isEqualTo("[::1]:8080");
    assertThat(CallObservation.address(HttpUrl.get("http://10.0.0.1:81/x"))).isEqualTo("10.0.0.1:81");
  }

  @Test
  void builder_rejectsANullRegistry_andASecondOne() {
    assertThatThrownBy(() -> LoadBalancingInterceptor.builder().observationRegistry(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("observationRegistry: null (expected: an ObservationRegistry)");
    assertThatThrownBy(() -> LoadBalancingInterceptor.builder().observationRegistry(registry)
        .observationRegistry(registry)).isInstanceOf(IllegalStateException.class);
  }
}
