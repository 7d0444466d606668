import { type GoogleAuth, GoogleError, GrpcClient } from 'google-gax';

/*
 * Cloud Resource Manager's projects.testIamPermissions (google.cloud.resourcemanager.v3.Projects),
 * over the same gRPC transport and credentials as Secret Manager. The Secret Manager package ships
 * no Resource Manager protos, so the one method is declared here as projects.proto declares it;
 * its messages are google.iam.v1's, as in google/iam/v1/iam_policy.proto.
 */
const PROTO = {
  nested: {
    google: {
      nested: {
        iam: {
          nested: {
            v1: {
              nested: {
                TestIamPermissionsRequest: {
                  fields: { resource: { type: 'string', id: 1 }, permissions: { rule: 'repeated', type: 'string', id: 2 } },
                },
                TestIamPermissionsResponse: { fields: { permissions: { rule: 'repeated', type: 'string', id: 1 } } },
              },
            },
          },
        },
        cloud: {
          nested: {
            resourcemanager: {
              nested: {
                v3: {
                  nested: {
                    Projects: {
                      methods: {
                        TestIamPermissions: {
                          requestType: 'google.iam.v1.TestIamPermissionsRequest',
                          responseType: 'google.iam.v1.TestIamPermissionsResponse',
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

type Callback = (error: Error | null, response?: { permissions?: string[] }) => void;
interface ProjectsStub {
  testIamPermissions(request: { resource: string; permissions: string[] }, options: { deadline: Date }, callback: Callback): void;
  close(): void;
}

/** Which of `permissions` the credentials hold on the project; rejects as a gRPC call does. */
export async function projectPermissions(
  auth: GoogleAuth,
  where: { host: string; port: number },
  project: string,
  permissions: string[],
): Promise<string[]> {
  const grpc = new GrpcClient({ auth });
  const loaded = grpc.loadProtoJSON(PROTO as never) as unknown as {
    google: { cloud: { resourcemanager: { v3: { Projects: unknown } } } };
  };
  const stub = (await grpc.createStub(
    loaded.google.cloud.resourcemanager.v3.Projects as never,
    {
      servicePath: where.host,
      port: where.port,
    } as never,
  )) as unknown as ProjectsStub;
  try {
    return await new Promise<string[]>((resolve, reject) => {
      stub.testIamPermissions(
        { resource: `projects/${project}`, permissions },
        { deadline: new Date(Date.now() + 30_000) },
        // The raw stub leaves google.rpc.ErrorInfo in the trailers: promoted as the generated clients do.
        (error, response) => (error ? reject(GoogleError.parseGRPCStatusDetails(error as never)) : resolve(response?.permissions ?? [])),
      );
    });
  } finally {
    stub.close();
  }
}
