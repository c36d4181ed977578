// Package folders is `abctl folders`: create, rename and delete the folders
// that group agents. Listing them is `abctl get folders`.
package folders

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/abctl/abctl/client"
	"github.com/abctl/abctl/cmd/abctl/internal/cmdutil"
	"github.com/abctl/abctl/cmd/abctl/internal/iostreams"
	"github.com/abctl/abctl/cmd/abctl/internal/listing"
	"github.com/abctl/abctl/cmd/abctl/internal/printer"
	"github.com/abctl/abctl/cmd/abctl/internal/resource"
)

// NewCmdFolders returns `abctl folders`.
func NewCmdFolders(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "folders",
		Aliases: []string{"folder"},
		Short:   "Create, update and delete folders (list them with 'abctl get folders')",
		Args:    cmdutil.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdCreate(f, nil), NewCmdUpdate(f, nil), NewCmdDelete(f, nil))
	return cmd
}

// CreateOptions are the inputs of `abctl folders create`.
type CreateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	Title       string
	Description string
	Format      printer.Format
}

// NewCmdCreate returns `abctl folders create`. runF, when not nil, is
// called with the options instead of creating the folder.
func NewCmdCreate(f *cmdutil.Factory, runF func(*CreateOptions) error) *cobra.Command {
	opts := &CreateOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	cmd := &cobra.Command{
		Use:     "create TITLE",
		Short:   "Create a folder",
		Example: "  abctl folders create Billing --description 'Invoices and payments'",
		Args:    cmdutil.ExactArgs(1, "the folder's title"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Title = args[0]
			return cmdutil.Run(cmd, opts, runF, runCreate)
		},
	}
	cmd.Flags().StringVar(&opts.Description, "description", "", "the folder's description")
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

func runCreate(ctx context.Context, opts *CreateOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	folder, err := c.Folders.Create(ctx, &client.FolderCreateRequest{Title: opts.Title, Description: opts.Description})
	if err != nil {
		return fmt.Errorf("create the folder: %w", err)
	}
	return listing.Folder(folder).Print(opts.IO, opts.Now(), opts.Format)
}

// UpdateOptions are the inputs of `abctl folders update`.
type UpdateOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)
	Now    func() time.Time

	// FolderID is the folder to change, without the folder/ of -o name.
	FolderID string
	// Title and Description are the new values; nil leaves one as it is.
	Title       *string
	Description *string
	Format      printer.Format
}

// NewCmdUpdate returns `abctl folders update`. runF, when not nil, is
// called with the validated options instead of changing the folder.
func NewCmdUpdate(f *cmdutil.Factory, runF func(*UpdateOptions) error) *cobra.Command {
	opts := &UpdateOptions{IO: f.IO, Client: f.Client, Now: f.Now}
	var title, description string
	cmd := &cobra.Command{
		Use:     "update FOLDER_ID",
		Short:   "Change a folder's title or description",
		Example: "  abctl folders update fld_123 --title Payments",
		Args:    cmdutil.ExactArgs(1, "a folder id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.FolderID = args[0]
			opts.Title, opts.Description = nil, nil
			if cmd.Flags().Changed("title") {
				opts.Title = &title
			}
			if cmd.Flags().Changed("description") {
				opts.Description = &description
			}
			return cmdutil.Run(cmd, opts, runF, runUpdate)
		},
	}
	cmd.Flags().StringVar(&title, "title", "", "the new title")
	cmd.Flags().StringVar(&description, "description", "", "the new description")
	printer.AddFlag(cmd, &opts.Format, printer.Name, printer.Table, printer.JSON, printer.YAML)
	return cmd
}

// Validate checks that something is to change, and reads the folder id.
func (o *UpdateOptions) Validate() error {
	if o.Title == nil && o.Description == nil {
		return cmdutil.UsageErrorf("give --title, --description or both")
	}
	id, err := resource.Folder.ID(o.FolderID)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.FolderID = id
	return nil
}

func runUpdate(ctx context.Context, opts *UpdateOptions) error {
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	req := &client.FolderUpdateRequest{Title: opts.Title, Description: opts.Description}
	folder, err := c.Folders.Update(ctx, opts.FolderID, req)
	if err != nil {
		return fmt.Errorf("update folder %s: %w", opts.FolderID, err)
	}
	return listing.Folder(folder).Print(opts.IO, opts.Now(), opts.Format)
}

// DeleteOptions are the inputs of `abctl folders delete`.
type DeleteOptions struct {
	IO     *iostreams.IOStreams
	Client func(context.Context) (*client.Client, error)

	// FolderID is the folder to delete, without the folder/ of -o name.
	FolderID string
	// DeleteAgents deletes the folder's agents too, instead of moving them
	// out of it.
	DeleteAgents bool
	Yes          bool
}

// NewCmdDelete returns `abctl folders delete`. runF, when not nil, is
// called with the validated options instead of deleting the folder.
func NewCmdDelete(f *cmdutil.Factory, runF func(*DeleteOptions) error) *cobra.Command {
	opts := &DeleteOptions{IO: f.IO, Client: f.Client}
	cmd := &cobra.Command{
		Use:   "delete FOLDER_ID",
		Short: "Delete a folder (its agents move out of it, or go with --delete-agents)",
		Args:  cmdutil.ExactArgs(1, "a folder id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.FolderID = args[0]
			return cmdutil.Run(cmd, opts, runF, runDelete)
		},
	}
	cmd.Flags().BoolVar(&opts.DeleteAgents, "delete-agents", false, "delete the folder's agents too")
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "do not ask for confirmation")
	return cmd
}

// Validate reads the folder id, and checks that deleting the agents can be
// confirmed: --yes, or a terminal to ask on.
func (o *DeleteOptions) Validate() error {
	id, err := resource.Folder.ID(o.FolderID)
	if err != nil {
		return cmdutil.UsageErrorf("%v", err)
	}
	o.FolderID = id
	return cmdutil.CanConfirm(o.IO, o.Yes || !o.DeleteAgents, "--delete-agents deletes every agent of the folder")
}

func runDelete(ctx context.Context, opts *DeleteOptions) error {
	id := opts.FolderID
	if opts.DeleteAgents && !opts.Yes {
		if err := cmdutil.ConfirmOrStop(opts.IO, fmt.Sprintf("Delete folder %s and every agent in it?", id)); err != nil {
			return err
		}
	}
	c, err := opts.Client(ctx)
	if err != nil {
		return err
	}
	res, err := c.Folders.Delete(ctx, id, &client.DeleteFolderOptions{DeleteAgents: opts.DeleteAgents})
	if err != nil {
		return fmt.Errorf("delete folder %s: %w", id, err)
	}
	msg := "its agents are no longer in a folder"
	if res.WorkflowsDeleted {
		msg = "its agents were deleted"
	}
	fmt.Fprintf(opts.IO.ErrOut, "Folder %s deleted; %s.\n", id, msg)
	return nil
}
