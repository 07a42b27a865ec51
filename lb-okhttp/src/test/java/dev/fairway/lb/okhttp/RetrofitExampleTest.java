package dev.fairway.lb.okhttp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Strategy;
import java.util.ArrayList;
import java.util.List;
import mockwebserver3.MockResponse;
import okhttp3.MediaType;
import okhttp3.OkHttpClient;
import okhttp3.RequestBody;
import okhttp3.ResponseBody;
import org.junit.jupiter.api.Test;
import retrofit2.Call;
import retrofit2.Retrofit;
import retrofit2.http.Body;
import retrofit2.http.GET;
import retrofit2.http.POST;
import retrofit2.http.Path;

/**
 * Retrofit, as many OkHttp users call services: an interface on base URL {@code http://orders/},
 * on a client with the interceptor. The Retrofit snippet of docs/hedging.md is this test, shortened.
 */
class RetrofitExampleTest {

  /** The service, as Retrofit sees it. */
  interface Orders {
    @GET("api/orders/{id}")
    Call<ResponseBody> order(@Path("id") String id);

    @POST("api/orders")
    Call<ResponseBody> create(@Body RequestBody order);
  }

  @Test
  void retrofitInterface_onLogicalBaseUrl_isBalancedAndRetriedAcrossInstances() throws Exception {
    try (Backends b = Backends.start(3, i -> request -> new MockResponse.Builder().code(200)
            .body("s" + i + " " + request.getMethod() + " " + request.getUrl().encodedPath()).build());
        LoadBalancer lb = LoadBalancer.builder("orders").targets(b.targets()).strategy(Strategy.roundRobin()).build()) {
      OkHttpClient client = b.client(LoadBalancingInterceptor.builder().service("orders", lb).build());
      Orders orders = new Retrofit.Builder()
          .baseUrl("http://orders/")
          .client(client)
          .build()
          .create(Orders.class);

      List<String> answers = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        try (ResponseBody body = orders.order("4" + i).execute().body()) {
          answers.add(body.string());
        }
      }
      try (ResponseBody body = orders.create(RequestBody.create("{}", MediaType.get("application/json"))).execute().body()) {
        answers.add(body.string());
      }
      b.kill(0); // gone: its pooled connection is dead and new ones are refused
      for (int i = 0; i < 3; i++) {
        try (ResponseBody body = orders.order("5" + i).execute().body()) {
          answers.add(body.string().replaceFirst("^s[12] ", "s1|2 "));
        }
      }

      int start = answers.get(0).charAt(1) - '0'; // round robin starts at a random instance
      assertThat(answers).containsExactly(
          "s" + start + " GET /api/orders/40", "s" + (start + 1) % 3 + " GET /api/orders/41",
          "s" + (start + 2) % 3 + " GET /api/orders/42", "s" + start + " POST /api/orders",
          "s1|2 GET /api/orders/50", "s1|2 GET /api/orders/51", "s1|2 GET /api/orders/52");
      assertThat(LoadBalancingInterceptorTest.inFlight(lb)).isZero();
    }
  }
}
